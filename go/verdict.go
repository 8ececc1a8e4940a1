package toolctx

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
)

// Outcome is what the core decided about a request.
type Outcome int

const (
	// Pass: not this contract's business (not a tools/call, ...): go on.
	Pass Outcome = iota
	// Accept: a verified tools/call; the context is in the verdict.
	Accept
	// Reject: refused; write the refusal as the core rendered it.
	Reject
)

func (o Outcome) String() string {
	return [...]string{"pass", "accept", "reject"}[o]
}

// Verdict is the core's verdict on one request, with what goes upstream.
type Verdict struct {
	Outcome Outcome
	// accepted holds the verified context (Accept): Verdict.Context.
	accepted *verified
	// Set are the headers an accepted call sets upstream, lower-case
	// names with the values the core encoded.
	Set [][2]string
	// Refusal is the core's refusal (Reject).
	Refusal *Refusal
}

// Context is an accepted call's verified context, parsed on first use;
// an error for any other outcome.
func (v *Verdict) Context() (*Context, error) {
	if v.accepted == nil {
		return nil, ErrNoContext
	}
	return v.accepted.context()
}

// Refusal is a refusal as the core rendered it: write Status and Body as is.
type Refusal struct {
	Status  int             `json:"status"`
	Code    int64           `json:"code"`
	Reason  string          `json:"reason"`
	Message string          `json:"message"`
	ID      json.RawMessage `json:"id"`
	Body    string          `json:"body"`
}

func readRefusal(b []byte) (*Refusal, error) {
	r := new(Refusal)
	if err := json.Unmarshal(b, r); err != nil {
		return nil, errors.New("toolctx: the core's refusal is not JSON")
	}
	return r, nil
}

// Context is the verified context of an accepted call (CONTRACT §1): the
// claims the token vouches for, and the request's JSON-RPC id (not vouched
// for: for answering and logging).
type Context struct {
	TaskID         string          `json:"task_id"`
	ToolCallID     string          `json:"tool_call_id"`
	WorkspaceID    string          `json:"workspace_id"`
	IdempotencyKey string          `json:"idempotency_key"`
	Protocol       string          `json:"protocol"`
	AgentID        string          `json:"agent_id,omitempty"`
	EndUserID      string          `json:"end_user_id,omitempty"`
	Metadata       json.RawMessage `json:"metadata,omitempty"`
	Tool           string          `json:"tool,omitempty"`
	JTI            string          `json:"jti,omitempty"`
	IssuedAt       int64           `json:"iat"`
	Expires        int64           `json:"exp"`
	SecretIndex    int             `json:"secret_index"`
	RequestID      json.RawMessage `json:"request_id,omitempty"`
}

// verified is an accepted call's context as the core wrote it, parsed on
// first use: a handler that never reads it costs no JSON parse.
type verified struct {
	raw  []byte
	once sync.Once
	ctx  *Context
	err  error
}

func (v *verified) context() (*Context, error) {
	v.once.Do(func() {
		c := new(Context)
		if err := json.Unmarshal(v.raw, c); err != nil {
			v.err = errors.New("toolctx: the core's context is not JSON")
			return
		}
		v.ctx = c
	})
	return v.ctx, v.err
}

// JSON is the context as the core wrote it.
func (v *verified) JSON() []byte { return v.raw }

// accepted reads `a<context>[\n<id>[\n<name>\n<value>]...]`.
func accepted(out []byte) (*verified, [][2]string) {
	ctx, rest, more := bytes.Cut(out, []byte{'\n'})
	v := &verified{raw: append([]byte(nil), ctx...)}
	if !more {
		return v, nil
	}
	// After the id line: name and value, in turn.
	_, rest, more = bytes.Cut(rest, []byte{'\n'})
	var set [][2]string
	for more {
		var name, value []byte
		name, rest, more = bytes.Cut(rest, []byte{'\n'})
		if !more {
			break
		}
		value, rest, more = bytes.Cut(rest, []byte{'\n'})
		set = append(set, [2]string{string(name), string(value)})
	}
	return v, set
}

// claim reads `c<ticket>\n<until>\n<jti>`.
func claim(out []byte) (ticket uint32, until int64, jti string, err error) {
	parts := bytes.SplitN(out, []byte{'\n'}, 3)
	if len(parts) != 3 {
		return 0, 0, "", errors.New("toolctx: malformed claim from the core")
	}
	t, err1 := strconv.ParseUint(string(parts[0]), 10, 32)
	u, err2 := strconv.ParseInt(string(parts[1]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, "", errors.New("toolctx: malformed claim from the core")
	}
	return uint32(t), u, string(parts[2]), nil
}

// ParseContext reads a verified context as the core wrote it
// (ContextJSON), for front ends that carry it across a boundary.
func ParseContext(raw []byte) (*Context, error) {
	return (&verified{raw: raw}).context()
}
