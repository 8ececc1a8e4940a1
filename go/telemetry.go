package toolctx

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// Telemetry is what the middleware records for each verdict; every field
// is optional. The otel subpackage (toolctxotel) fills Hook with metrics and
// spans under the core's names.
type Telemetry struct {
	// Logger gets the refusal log line (level Warn, message
	// "toolctx refused", the reason and the request's method and tool as
	// the core read them; never a token or a secret).
	Logger *slog.Logger
	// Hook is called once per verdict.
	Hook func(ctx context.Context, e Event)
}

// Event is one verdict as the telemetry sees it.
type Event struct {
	Outcome  Outcome
	Reason   string // the refusal's reason code, for Reject
	Status   int    // the refusal's HTTP status, for Reject
	Duration time.Duration
	Err      error // the core's or the guard's failure, if any
	Remote   string

	method   string
	body     []byte
	accepted *verified
}

// Describe is the request's JSON-RPC method and tool as the core read the
// body ("" when unknown), asked of the core only when called.
func (e *Event) Describe() (method, tool string) {
	if e.body == nil {
		return "", ""
	}
	return describeRequest(e.method, e.body, e.Reason)
}

// Context is an accepted call's verified context.
func (e *Event) Context() (*Context, error) {
	if e.accepted == nil {
		return nil, ErrNoContext
	}
	return e.accepted.context()
}

func (v *Verifier) record(r *http.Request, started time.Time, verdict Verdict, body []byte, err error) {
	t := v.tel
	if t == nil || (t.Hook == nil && (t.Logger == nil || verdict.Outcome != Reject)) {
		return
	}
	e := Event{Outcome: verdict.Outcome, Duration: time.Since(started), Err: err, Remote: r.RemoteAddr,
		method: r.Method, body: body, accepted: verdict.accepted}
	if verdict.Refusal != nil {
		e.Reason, e.Status = verdict.Refusal.Reason, verdict.Refusal.Status
	}
	if t.Hook != nil {
		t.Hook(r.Context(), e)
	}
	if t.Logger != nil && verdict.Outcome == Reject {
		attrs := []slog.Attr{slog.String("reason", e.Reason), slog.Int("status", e.Status)}
		if method, tool := e.Describe(); method != "" {
			attrs = append(attrs, slog.String("rpc.method", method))
			if tool != "" {
				attrs = append(attrs, slog.String("tool", tool))
			}
		}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		t.Logger.LogAttrs(r.Context(), slog.LevelWarn, "toolctx refused", attrs...)
	}
}

// describeRequest is the request's JSON-RPC method and tool as the core
// read them (never to decide).
func describeRequest(method string, body []byte, reason string) (string, string) {
	items, err := withCore(func(in *instance) ([]string, error) {
		return in.listOf("toolctx_describe_request", [][]byte{[]byte(method), body, []byte(reason)})
	})
	if err != nil || len(items) != 2 {
		return "", ""
	}
	return items[0], items[1]
}

// CoreCodes is the core's JSON of its reason codes, configuration error
// codes and telemetry names (from the helpers module: the verifier's
// module, which every user runs, has no room for them).
func CoreCodes() ([]byte, error) {
	return withHelpers(func(in *instance) ([]byte, error) {
		out, err := in.call("toolctx_core_codes", nil)
		return append([]byte(nil), out...), err
	})
}
