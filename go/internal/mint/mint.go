// Package mint makes context tokens and the matching _meta for the tests,
// examples and benchmark, with the standard library only (never with
// toolctx), as tests/support/checks.py does.
package mint

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"
)

// Call is one tools/call's context: the token's claims and the _meta
// the platform puts beside them.
type Call struct {
	Claims map[string]any
	Meta   map[string]any
}

// NewCall is a call for tool on task, for the instance, issued now.
func NewCall(instance, task, tool string, now time.Time) Call {
	call := "call-" + rand.Text()[:8]
	ctx := map[string]any{
		"protocol": "1", "task_id": task, "tool_call_id": call, "workspace_id": "ws-1",
		"idempotency_key": task + ":" + call, "end_user_id": "user-42",
	}
	claims := map[string]any{
		"iss": "agentarea", "aud": instance, "iat": now.Unix(), "exp": now.Unix() + 300,
		"jti": rand.Text(), "tool": tool,
	}
	meta := map[string]any{}
	for k, v := range ctx {
		claims[k] = v
		meta["agentarea/"+k] = v
	}
	return Call{Claims: claims, Meta: meta}
}

// Token is the HS256 token of the claims.
func (c Call) Token(secret string) string {
	b64 := base64.RawURLEncoding.EncodeToString
	head := b64([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body, _ := json.Marshal(c.Claims)
	signing := head + "." + b64(body)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(signing))
	return signing + "." + b64(mac.Sum(nil))
}

// Body is the JSON-RPC tools/call request with the call's _meta.
func (c Call) Body(id int, tool string, arguments any) []byte {
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": arguments, "_meta": c.Meta},
	})
	return body
}
