package toolctxotel_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	toolctx "github.com/toolctx/toolctx/go"
	"github.com/toolctx/toolctx/go/internal/testsetup"
	"github.com/toolctx/toolctx/go/toolctxotel"
	"github.com/toolctx/toolctx/go/toolctxtest"
)

func TestVerdictsUnderTheCoresNames(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	hook, err := toolctxotel.Hook(mp, tp)
	if err != nil {
		t.Fatal(err)
	}
	v := testsetup.Verifier(t, toolctx.Options{Telemetry: &toolctx.Telemetry{Hook: hook}})
	h := toolctx.Middleware(v)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	call := toolctxtest.NewCall(testsetup.Instance, "task-1", "get_order", time.Now())
	for _, token := range []string{call.Token(testsetup.Secret), ""} {
		h.ServeHTTP(httptest.NewRecorder(), testsetup.ToolCall(call.Body(1, "get_order", map[string]any{}), token))
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			got[sm.Scope.Name+" "+m.Name] = true
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range sum.DataPoints {
					outcome, _ := dp.Attributes.Value("toolctx.outcome")
					reason, hasReason := dp.Attributes.Value("toolctx.reason")
					if outcome.AsString() == "reject" && reason.AsString() != "token_missing" || outcome.AsString() == "accept" && hasReason {
						t.Errorf("%s: %v", m.Name, dp.Attributes)
					}
				}
			}
		}
	}
	if !got["toolctx toolctx.verdicts"] || !got["toolctx toolctx.check.duration"] {
		t.Fatalf("metrics %v", got)
	}
	ended := spans.Ended()
	if len(ended) != 2 || ended[0].Name() != "toolctx.verify" {
		t.Fatalf("spans %d", len(ended))
	}
	attrs := attribute.NewSet(ended[0].Attributes()...)
	if task, _ := attrs.Value("toolctx.task_id"); task.AsString() != "task-1" {
		t.Fatalf("accepted span %v", ended[0].Attributes())
	}
	attrs = attribute.NewSet(ended[1].Attributes()...)
	method, _ := attrs.Value("mcp.method.name")
	tool, _ := attrs.Value("gen_ai.tool.name")
	if method.AsString() != "tools/call" || tool.AsString() != "get_order" {
		t.Fatalf("refused span %v", ended[1].Attributes())
	}
	if ended[1].Status().Description != "token_missing" {
		t.Fatalf("refused span status %v", ended[1].Status())
	}
}
