package toolctxtest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
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

// WithCallID is the call with tool_call_id id (and the idempotency key
// task:id), in the claims and in _meta alike: a retry of the same call.
func (c Call) WithCallID(id string) Call {
	claims, meta := clone(c.Claims), clone(c.Meta)
	key := fmt.Sprint(claims["task_id"]) + ":" + id
	for k, v := range map[string]any{"tool_call_id": id, "idempotency_key": key} {
		claims[k] = v
		meta["agentarea/"+k] = v
	}
	return Call{Claims: claims, Meta: meta}
}

// Reissued is the same call with a new token id (jti), as the platform
// mints a fresh token when it retries a call.
func (c Call) Reissued() Call {
	claims := clone(c.Claims)
	claims["jti"] = rand.Text()
	return Call{Claims: claims, Meta: c.Meta}
}

// Token is the HS256 token of the call's claims.
func (c Call) Token(secret string) string {
	return Token(c.Claims, secret)
}

// Token is the HS256 token of any claims: for tokens a server must refuse
// (a claim left out, a wrong audience) as well as good ones.
func Token(claims map[string]any, secret string) string {
	b64 := base64.RawURLEncoding.EncodeToString
	head := b64([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body, _ := json.Marshal(claims)
	signing := head + "." + b64(body)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(signing))
	return signing + "." + b64(mac.Sum(nil))
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Body is the JSON-RPC tools/call request with the call's _meta.
func (c Call) Body(id int, tool string, arguments any) []byte {
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": arguments, "_meta": c.Meta},
	})
	return body
}
