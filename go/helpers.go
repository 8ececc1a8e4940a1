package toolctx

import (
	"encoding/json"
	"math"
	"strconv"
)

// The server helpers' rules (CONTRACT §5) run on the helpers module: one
// mutex-guarded instance, since they are not on every request's path.
var helpersCore = &single{code: helpersWasm, module: func(e *engine) *lazyModule { return &e.helpers }}

func withHelpers[T any](f func(*instance) (T, error)) (T, error) { return withSingle(helpersCore, f) }

// ResultLimits are the platform's limits on a tool result, as the core's JSON.
func ResultLimits() (json.RawMessage, error) {
	return withHelpers(func(in *instance) (json.RawMessage, error) {
		out, err := in.call("toolctx_result_limits", nil)
		return append(json.RawMessage(nil), out...), err
	})
}

// CheckResult measures a CallToolResult (JSON) against the platform's
// limits: the core's findings, a JSON array (empty when within them).
func CheckResult(result []byte) (json.RawMessage, error) {
	return withHelpers(func(in *instance) (json.RawMessage, error) {
		out, err := in.call("toolctx_check_result", [][]byte{result})
		return append(json.RawMessage(nil), out...), err
	})
}

// ProgressIntervalMs is the platform's relay interval for progress
// reports (the settings table's progress_interval_ms default).
func ProgressIntervalMs() (int64, error) {
	return settingNumber("progress_interval_ms", nil)
}

// Coalescer is one call's progress coalescing, the core's (what is sent,
// held until a time, or dropped). Its answers are the core's: Step.
type Coalescer struct {
	handle int32
	freed  bool
}

// Step is the core's answer about a progress report.
type Step struct {
	// Send is the report to send now as JSON (progress, total, message), or nil.
	Send json.RawMessage
	// At is the time (ms) to ask again (Tick) when Arm is set, or when the
	// core held the report behind a timer already waiting.
	At  int64
	Arm bool
}

// NewCoalescer is a coalescer for one call; intervalMs is read by the
// core's settings table (progress_interval_ms: 0 is the platform's relay
// interval, a number out of range is refused).
func NewCoalescer(intervalMs int64) (*Coalescer, error) {
	intervalMs, err := settingNumber("progress_interval_ms", intervalMs)
	if err != nil {
		return nil, err
	}
	h, err := withHelpers(func(in *instance) (int64, error) {
		return in.number("toolctx_progress_new", uint64(intervalMs))
	})
	return &Coalescer{handle: int32(h)}, err
}

// step reads `s` + report, `a`/`w` + time (arm a timer), `h` + time (held),
// `d`, `i` or nothing.
func step(out []byte) Step {
	if len(out) == 0 {
		return Step{}
	}
	switch out[0] {
	case 's':
		return Step{Send: append(json.RawMessage(nil), out[1:]...)}
	case 'a', 'w', 'h':
		at, _ := strconv.ParseInt(string(out[1:]), 10, 64)
		return Step{At: at, Arm: out[0] != 'h'}
	}
	return Step{}
}

func (c *Coalescer) ask(op string, params ...uint64) (Step, error) {
	return withHelpers(func(in *instance) (Step, error) {
		out, err := in.call(op, nil, params...)
		return step(out), err
	})
}

// Report is a new report at nowMs; total NaN is none.
func (c *Coalescer) Report(nowMs int64, progress, total float64, message *string) (Step, error) {
	has, msg := uint64(0), []byte(nil)
	if message != nil {
		has, msg = 1, []byte(*message)
	}
	return withHelpers(func(in *instance) (Step, error) {
		out, err := in.call("toolctx_progress_report", [][]byte{msg}, uint64(uint32(c.handle)), uint64(nowMs),
			math.Float64bits(progress), math.Float64bits(total), has)
		return step(out), err
	})
}

// Tick is a timer that fired at nowMs.
func (c *Coalescer) Tick(nowMs int64) (Step, error) {
	return c.ask("toolctx_progress_tick", uint64(uint32(c.handle)), uint64(nowMs))
}

// Flush is the held report to send now, if any.
func (c *Coalescer) Flush(nowMs int64) (Step, error) {
	return c.ask("toolctx_progress_flush", uint64(uint32(c.handle)), uint64(nowMs))
}

// Close ends the call: later reports are dropped, nothing more is sent.
func (c *Coalescer) Close() {
	_, _ = withHelpers(func(in *instance) (struct{}, error) {
		return struct{}{}, in.invoke("toolctx_progress_close", uint64(uint32(c.handle)))
	})
}

// Free releases the coalescer; it is not used after.
func (c *Coalescer) Free() {
	if c.freed {
		return
	}
	c.freed = true
	_, _ = withHelpers(func(in *instance) (struct{}, error) {
		return struct{}{}, in.invoke("toolctx_progress_free", uint64(uint32(c.handle)))
	})
}
