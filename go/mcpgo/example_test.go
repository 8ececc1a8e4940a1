package mcpgo_test

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolctx "github.com/toolctx/toolctx/go"
	"github.com/toolctx/toolctx/go/mcpgo"
)

// An mcp-go server: ContextFunc carries the verified context to the
// handlers, which read it with toolctx.FromContext.
func ExampleContextFunc() {
	v, err := toolctx.NewVerifier(toolctx.Options{InstanceID: "srv-1", Secrets: []string{"example-secret-0123456789abcdef-0123"}})
	if err != nil {
		panic(err)
	}
	defer v.Close()
	s := server.NewMCPServer("example", "1")
	s.AddTool(mcp.NewTool("get_order"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c, err := toolctx.FromContext(ctx)
		if err != nil {
			return nil, err
		}
		return mcp.NewToolResultText("for task " + c.TaskID), nil
	})
	handler := toolctx.Middleware(v)(server.NewStreamableHTTPServer(s, server.WithHTTPContextFunc(mcpgo.ContextFunc)))
	_ = handler // http.Handle("/mcp", handler)

	_, err = toolctx.FromContext(context.Background())
	fmt.Println(err == toolctx.ErrNoContext)
	// Output: true
}
