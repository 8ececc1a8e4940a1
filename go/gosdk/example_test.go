package gosdk_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	toolctx "github.com/toolctx/toolctx/go"
	"github.com/toolctx/toolctx/go/gosdk"
)

// A go-sdk server behind the middleware; tool handlers read the verified
// context with FromRequest.
func ExampleFromRequest() {
	v, err := toolctx.NewVerifier(toolctx.Options{InstanceID: "srv-1", Secrets: []string{"example-secret-0123456789abcdef-0123"}})
	if err != nil {
		panic(err)
	}
	defer v.Close()
	s := mcp.NewServer(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "get_order"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		c, err := gosdk.FromRequest(req)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "for task " + c.TaskID}}}, nil, nil
	})
	handler := gosdk.Middleware(v)(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	_ = handler // http.Handle("/mcp", handler)

	// Without the middleware, there is no context, never an empty one.
	_, err = gosdk.FromRequest(&mcp.CallToolRequest{})
	fmt.Println(err == toolctx.ErrNoContext)
	// Output: true
}
