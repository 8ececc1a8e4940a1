package mcpgo_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolctx "github.com/toolctx/toolctx/go"
	"github.com/toolctx/toolctx/go/internal/testsetup"
	"github.com/toolctx/toolctx/go/mcpgo"
	"github.com/toolctx/toolctx/go/toolctxtest"
)

func TestToolHandlersSeeTheVerifiedContext(t *testing.T) {
	v := testsetup.Verifier(t, toolctx.Options{})
	for _, stateless := range []bool{true, false} {
		var runs atomic.Int32
		s := server.NewMCPServer("mcp-go-test", "1")
		s.AddTool(mcp.NewTool("whoami"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			runs.Add(1)
			c, err := toolctx.FromContext(ctx)
			if err != nil {
				return mcp.NewToolResultText("error: " + err.Error()), nil
			}
			return mcp.NewToolResultText(c.TaskID), nil
		})
		h := server.NewStreamableHTTPServer(s, server.WithHTTPContextFunc(mcpgo.ContextFunc), server.WithStateLess(stateless))
		srv := testsetup.Serve(t, toolctx.Middleware(v)(h))
		p := &toolctxtest.Platform{}
		c, err := client.NewStreamableHttpClient(srv.URL, transport.WithHTTPBasicClient(&http.Client{Transport: p}))
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		init.Params.ClientInfo = mcp.Implementation{Name: "mcp-go-test-client", Version: "1"}
		if _, err := c.Initialize(ctx, init); err != nil {
			t.Fatal(err)
		}
		call := func(task string) (string, error) {
			req := mcp.CallToolRequest{}
			req.Params.Name = "whoami"
			p.SetToken("")
			if task != "" {
				m := toolctxtest.NewCall(testsetup.Instance, task, "whoami", time.Now())
				p.SetToken(m.Token(testsetup.Secret))
				req.Params.Meta = &mcp.Meta{AdditionalFields: m.Meta}
			}
			res, err := c.CallTool(ctx, req)
			if err != nil {
				return "", err
			}
			return res.Content[0].(mcp.TextContent).Text, nil
		}
		for _, task := range []string{"task-a", "task-b"} {
			if got, err := call(task); err != nil || got != task {
				t.Fatalf("stateless %v: %s: %q %v", stateless, task, got, err)
			}
		}
		before := runs.Load()
		if got, err := call(""); err == nil {
			t.Fatalf("stateless %v: a call without a token was answered: %q", stateless, got)
		}
		if runs.Load() != before {
			t.Fatalf("stateless %v: a refused call ran", stateless)
		}
		_ = c.Close()
	}
}
