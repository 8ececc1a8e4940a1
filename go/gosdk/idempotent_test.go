package gosdk_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	toolctx "github.com/toolctx/toolctx/go"
	"github.com/toolctx/toolctx/go/gosdk"
	"github.com/toolctx/toolctx/go/internal/testsetup"
	"github.com/toolctx/toolctx/go/toolctxtest"
)

func TestIdempotentRunsOncePerKey(t *testing.T) {
	v := testsetup.Verifier(t, toolctx.Options{})
	idem, err := toolctx.NewIdempotency(toolctx.IdempotencyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	s := mcp.NewServer(&mcp.Implementation{Name: "idem", Version: "1"}, nil)
	type in struct {
		Amount int `json:"amount"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "create_invoice"}, gosdk.Idempotent(idem,
		func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
			n := runs.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "invoice " + string(rune('0'+n))}}}, nil, nil
		}))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	srv := testsetup.Serve(t, gosdk.Middleware(v)(h))
	p := &toolctxtest.Platform{}
	cs := connect(t, srv.URL, "2025-11-25", p)
	defer cs.Close()
	call := toolctxtest.NewCall(testsetup.Instance, "task-i", "create_invoice", time.Now())
	invoke := func(amount int) *mcp.CallToolResult {
		t.Helper()
		p.SetToken(call.Reissued().Token(testsetup.Secret)) // a fresh token per attempt, the same context
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "create_invoice", Arguments: map[string]any{"amount": amount}, Meta: call.Meta})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := invoke(42)
	retry := invoke(42)
	if runs.Load() != 1 || retry.Meta["agentarea/replayed"] != true || first.Content[0].(*mcp.TextContent).Text != retry.Content[0].(*mcp.TextContent).Text {
		t.Fatalf("runs %d, retry %+v", runs.Load(), retry)
	}
	conflict := invoke(43)
	if runs.Load() != 1 || !conflict.IsError || !strings.Contains(conflict.Content[0].(*mcp.TextContent).Text, "idempotency") {
		t.Fatalf("conflict: runs %d, %+v %v", runs.Load(), conflict, conflict.Meta)
	}
}
