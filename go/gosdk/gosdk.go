// Package gosdk hands toolctx's verified context to the tool handlers of
// the official MCP Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// The SDK runs a tool handler on its session's context, not the HTTP
// request's, so toolctx.FromContext cannot see what the middleware put
// there. What a handler does see is req.Extra.Header, the HTTP request's
// headers: Middleware carries the verified context there, under a header
// whose value starts with a key random to this process (every copy a
// client sends is removed first, so it cannot be forged), and FromRequest
// reads it back.
//
//	v, _ := toolctx.NewVerifier(toolctx.Options{InstanceID: id, Secrets: []string{secret}})
//	handler := mcp.NewStreamableHTTPHandler(getServer, nil)
//	http.Handle("/mcp", gosdk.Middleware(v)(handler))
//
//	func getOrder(ctx context.Context, req *mcp.CallToolRequest, in Args) (*mcp.CallToolResult, any, error) {
//		tc, err := gosdk.FromRequest(req)
//		...
//	}
package gosdk

import (
	"crypto/rand"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	toolctx "github.com/toolctx/toolctx/go"
)

// Header is the header Middleware carries the verified context in, inside
// the process only.
const Header = "Toolctx-Verified-Context"

// key marks a value this process's Middleware set.
var key = rand.Text()

// Middleware is toolctx.Middleware that also hands an accepted call's
// verified context to the SDK's tool handlers (FromRequest).
func Middleware(v *toolctx.Verifier) func(http.Handler) http.Handler {
	verify := toolctx.Middleware(v)
	return func(next http.Handler) http.Handler {
		return verify(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Del(Header)
			if raw := toolctx.ContextJSON(r.Context()); raw != nil {
				r.Header.Set(Header, key+" "+string(raw))
			}
			next.ServeHTTP(w, r)
		}))
	}
}

// FromRequest is the verified context of the call req belongs to. It
// returns an error, never an empty context, when there is none: no
// gosdk.Middleware in front of the handler, or a call the verifier passed
// without a context (require_context off).
func FromRequest(req *mcp.CallToolRequest) (*toolctx.Context, error) {
	if req == nil || req.Extra == nil {
		return nil, toolctx.ErrNoContext
	}
	return FromHeader(req.Extra.Header)
}

// FromHeader reads the verified context from the headers a request
// arrived with behind Middleware (req.Extra.Header of any SDK request).
func FromHeader(h http.Header) (*toolctx.Context, error) {
	values := h.Values(Header)
	if len(values) != 1 {
		return nil, toolctx.ErrNoContext
	}
	mark, raw, ok := strings.Cut(values[0], " ")
	if !ok || subtle.ConstantTimeCompare([]byte(mark), []byte(key)) != 1 {
		return nil, toolctx.ErrNoContext
	}
	return toolctx.ParseContext([]byte(raw))
}
