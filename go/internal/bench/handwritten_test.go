// Package bench (test files only) compares the Go middleware's added CPU per call over a
// go-sdk server with the middleware a Go developer would write by hand
// (golang-jwt v5 HS256, encoding/json and the _meta binding). Not a test:
// bench/go.sh runs it.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

type handKey struct{}

// handwritten is the usual hand-written check: the token from the header,
// HS256 with issuer, audience and exp leeway, the body's tools/call
// _meta bound to the token's claims, the claims in the context.
func handwritten(secret []byte, instance string, maxBody int64) func(http.Handler) http.Handler {
	parser := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer("agentarea"),
		jwt.WithAudience(instance), jwt.WithLeeway(30*time.Second), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	keyFunc := func(*jwt.Token) (any, error) { return secret, nil }
	refuse := func(w http.ResponseWriter, status int, reason string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"refused","data":{"reason":"`+reason+`"}}}`)
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				next.ServeHTTP(w, r)
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
			if err != nil || int64(len(body)) > maxBody {
				refuse(w, http.StatusRequestEntityTooLarge, "body_too_large")
				return
			}
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name string         `json:"name"`
					Meta map[string]any `json:"_meta"`
				} `json:"params"`
			}
			if err := json.Unmarshal(body, &msg); err != nil {
				refuse(w, http.StatusBadRequest, "parse_error")
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if msg.Method != "tools/call" {
				next.ServeHTTP(w, r)
				return
			}
			raw := r.Header.Get("X-AgentArea-Context")
			if raw == "" {
				refuse(w, http.StatusUnauthorized, "token_missing")
				return
			}
			claims := jwt.MapClaims{}
			if _, err := parser.ParseWithClaims(raw, claims, keyFunc); err != nil {
				refuse(w, http.StatusUnauthorized, "token_invalid")
				return
			}
			if tool, ok := claims["tool"].(string); ok && tool != msg.Params.Name {
				refuse(w, http.StatusForbidden, "tool_mismatch")
				return
			}
			for _, k := range []string{"task_id", "tool_call_id", "workspace_id", "idempotency_key", "protocol"} {
				if claims[k] == nil || msg.Params.Meta["agentarea/"+k] != claims[k] {
					refuse(w, http.StatusForbidden, "meta_mismatch")
					return
				}
			}
			for k, v := range msg.Params.Meta {
				if name, ok := strings.CutPrefix(k, "agentarea/"); ok && claims[name] != v {
					refuse(w, http.StatusForbidden, "meta_mismatch")
					return
				}
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), handKey{}, claims)))
		})
	}
}
