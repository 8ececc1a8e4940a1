// Package testsetup is the setup the module's tests and benchmarks share
// (not shipped: internal, imported by _test.go files only): a verifier
// and a test server that end with the test, and a signed tools/call
// request as a client sends it.
package testsetup

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	toolctx "github.com/toolctx/toolctx/go"
)

// The platform's instance id and secret the tests share.
const (
	Instance = "toolctx-go-tests"
	Secret   = "toolctx-go-tests-secret-0123456789abcdef"
)

// Verifier is toolctx.NewVerifier for a test, over Instance and Secret
// unless o names its own: a refused configuration fails the test, and the
// verifier is closed when it ends.
func Verifier(tb testing.TB, o toolctx.Options) *toolctx.Verifier {
	tb.Helper()
	if o.InstanceID == "" && o.Secrets == nil {
		o.InstanceID, o.Secrets = Instance, []string{Secret}
	}
	v, err := toolctx.NewVerifier(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(v.Close)
	return v
}

// Serve is httptest.NewServer for a test, closed when it ends.
func Serve(tb testing.TB, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv
}

// ToolCall is a Streamable HTTP POST of body with the headers an MCP
// client sends, and the platform's token when one is given.
func ToolCall(body []byte, token string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if token != "" {
		r.Header.Set("X-AgentArea-Context", token)
	}
	return r
}
