// Package mcpgo hands toolctx's verified context to the tool handlers of
// github.com/mark3labs/mcp-go through server.WithHTTPContextFunc.
//
//	v, _ := toolctx.NewVerifier(toolctx.Options{InstanceID: id, Secrets: []string{secret}})
//	h := server.NewStreamableHTTPServer(s, server.WithHTTPContextFunc(mcpgo.ContextFunc))
//	http.Handle("/mcp", toolctx.Middleware(v)(h))
//
// A tool handler reads it with toolctx.FromContext(ctx), which returns an
// error, never an empty context, when there is none.
package mcpgo

import (
	"context"
	"net/http"

	toolctx "github.com/toolctx/toolctx/go"
)

// ContextFunc carries the verified context of the HTTP request (set by
// toolctx.Middleware) into the context mcp-go runs the handlers on. Give
// it to server.WithHTTPContextFunc.
func ContextFunc(ctx context.Context, r *http.Request) context.Context {
	return toolctx.CarryContext(ctx, r.Context())
}
