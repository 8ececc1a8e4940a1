// Package toolctxotel records toolctx's verdicts with OpenTelemetry under
// the core's names (the counter toolctx.verdicts, the histogram
// toolctx.check.duration, the span toolctx.verify and their attributes:
// toolctx_core_codes' telemetry names), as the npm and Python front ends do.
//
//	hook, _ := toolctxotel.Hook(otel.GetMeterProvider(), otel.GetTracerProvider())
//	v, _ := toolctx.NewVerifier(toolctx.Options{..., Telemetry: &toolctx.Telemetry{Hook: hook}})
package toolctxotel

import (
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	toolctx "github.com/toolctx/toolctx/go"
)

// names are the core's telemetry names.
type names struct {
	Scope             string    `json:"scope"`
	Verdicts          string    `json:"verdicts"`
	CheckDuration     string    `json:"checkDuration"`
	CheckDurationUnit string    `json:"checkDurationUnit"`
	Outcome           string    `json:"outcome"`
	Reason            string    `json:"reason"`
	Span              string    `json:"span"`
	McpMethod         string    `json:"mcpMethod"`
	Tool              string    `json:"tool"`
	TaskID            string    `json:"taskId"`
	WorkspaceID       string    `json:"workspaceId"`
	Buckets           []float64 `json:"durationBucketsSeconds"`
}

// Hook is a toolctx.Telemetry hook recording every verdict on mp and tp.
func Hook(mp metric.MeterProvider, tp trace.TracerProvider) (func(context.Context, toolctx.Event), error) {
	raw, err := toolctx.CoreCodes()
	if err != nil {
		return nil, err
	}
	var core struct {
		Telemetry names `json:"telemetry"`
	}
	if err := json.Unmarshal(raw, &core); err != nil {
		return nil, err
	}
	t := core.Telemetry
	meter := mp.Meter(t.Scope)
	counter, err := meter.Int64Counter(t.Verdicts, metric.WithDescription("toolctx verdicts, by outcome and refusal reason"))
	if err != nil {
		return nil, err
	}
	histogram, err := meter.Float64Histogram(t.CheckDuration, metric.WithUnit(t.CheckDurationUnit),
		metric.WithDescription("time to reach a toolctx verdict"), metric.WithExplicitBucketBoundaries(t.Buckets...))
	if err != nil {
		return nil, err
	}
	tracer := tp.Tracer(t.Scope)
	return func(ctx context.Context, e toolctx.Event) {
		outcome := attribute.String(t.Outcome, e.Outcome.String())
		attrs := []attribute.KeyValue{outcome}
		// The reason only on refusals: absent, never empty, otherwise.
		if e.Outcome == toolctx.Reject {
			attrs = append(attrs, attribute.String(t.Reason, e.Reason))
		}
		counter.Add(ctx, 1, metric.WithAttributes(attrs...))
		histogram.Record(ctx, e.Duration.Seconds(), metric.WithAttributes(outcome))
		end := time.Now()
		_, span := tracer.Start(ctx, t.Span, trace.WithTimestamp(end.Add(-e.Duration)), trace.WithAttributes(attrs...))
		if span.IsRecording() {
			method, tool := e.Describe()
			if method != "" {
				span.SetAttributes(attribute.String(t.McpMethod, method))
			}
			if tool != "" {
				span.SetAttributes(attribute.String(t.Tool, tool))
			}
			if c, err := e.Context(); err == nil {
				span.SetAttributes(attribute.String(t.TaskID, c.TaskID), attribute.String(t.WorkspaceID, c.WorkspaceID))
			}
			if e.Outcome == toolctx.Reject {
				span.SetStatus(codes.Error, e.Reason)
			}
		}
		span.End(trace.WithTimestamp(end))
	}, nil
}
