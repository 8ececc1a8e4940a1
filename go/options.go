package toolctx

import (
	"encoding/json"
	"time"
)

// Options mirror npm's createVerifier: the core's settings (CONTRACT §1;
// zero values are left to the core's defaults) and this front end's own.
type Options struct {
	// InstanceID is the token's required audience: this server's id.
	InstanceID string `json:"instance_id,omitempty"`
	// Secrets are the HMAC keys, newest first (rotation).
	Secrets []string `json:"secrets,omitempty"`
	// Credential is an optional static credential checked before the body is read.
	Credential *Credential `json:"credential,omitempty"`
	// RequireContext refuses a tools/call without a context token; nil: the core's default.
	RequireContext     *bool `json:"require_context,omitempty"`
	ClockSkewSeconds   int64 `json:"clock_skew_s,omitempty"`
	MaxTokenAgeSeconds int64 `json:"max_token_age_s,omitempty"`
	MaxBodyBytes       int64 `json:"max_body_bytes,omitempty"`
	MaxTokenBytes      int64 `json:"max_token_bytes,omitempty"`
	ProtocolMajors     []int `json:"protocol_majors,omitempty"`
	// Forward maps verified context fields to headers set upstream.
	Forward *Forward `json:"forward,omitempty"`

	// Config is the core's configuration JSON as is (snake_case settings),
	// instead of the fields above, which must then be unset.
	Config json.RawMessage `json:"-"`
	// IncludeReason puts data.reason in refusals; nil: the core's default (docs/CONTRACT.md, "Settings").
	IncludeReason *bool `json:"-"`
	// ReplayGuard refuses replayed tokens: MemoryReplayGuard for one
	// process, a shared ReplayStore (Redis) for several; nil: off.
	ReplayGuard ReplayGuard `json:"-"`
	// Now is the clock; nil: time.Now.
	Now func() time.Time `json:"-"`
	// Telemetry records verdicts and refusal log lines; nil: none.
	Telemetry *Telemetry `json:"-"`
}

// Credential is a static credential: the header and its accepted values.
type Credential struct {
	Header string   `json:"header"`
	Values []string `json:"values"`
}

// Forward is what an accepted call forwards upstream: context field name
// (task_id, workspace_id, ...) to header name, and the Tuix headers.
type Forward struct {
	Headers map[string]string `json:"headers,omitempty"`
	Tuix    bool              `json:"tuix,omitempty"`
}

// Bool is a pointer to b, for Options.RequireContext and IncludeReason.
func Bool(b bool) *bool { return &b }

// configJSON is the core's configuration: Config as given, or the fields.
func (o *Options) configJSON() ([]byte, error) {
	if len(o.Config) > 0 {
		fields, _ := json.Marshal(o)
		if string(fields) != "{}" {
			return nil, &Error{Code: "config_invalid", Message: "Options.Config is given: leave the settings fields unset"}
		}
		return append([]byte(nil), o.Config...), nil
	}
	return json.Marshal(o)
}
