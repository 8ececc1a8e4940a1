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

type whoamiOut struct {
	TaskID string `json:"task_id"`
	Error  string `json:"error"`
}

// server is a go-sdk server whose whoami tool answers what FromRequest says.
func server(runs *atomic.Int32) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk-test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, whoamiOut, error) {
		runs.Add(1)
		c, err := gosdk.FromRequest(req)
		if err != nil {
			return nil, whoamiOut{Error: err.Error()}, nil
		}
		return nil, whoamiOut{TaskID: c.TaskID}, nil
	})
	return s
}

func connect(t *testing.T, url, version string, p *toolctxtest.Platform) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "gosdk-test-client", Version: "1"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: p}}
	cs, err := client.Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func whoami(t *testing.T, cs *mcp.ClientSession, p *toolctxtest.Platform, task string) (whoamiOut, error) {
	t.Helper()
	params := &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}}
	p.SetToken("")
	if task != "" {
		call := toolctxtest.NewCall(testsetup.Instance, task, "whoami", time.Now())
		p.SetToken(call.Token(testsetup.Secret))
		params.Meta = call.Meta
	}
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		return whoamiOut{}, err
	}
	var out whoamiOut
	if m, ok := res.StructuredContent.(map[string]any); ok {
		out.TaskID, _ = m["task_id"].(string)
		out.Error, _ = m["error"].(string)
	}
	return out, nil
}

func TestToolHandlersSeeTheVerifiedContext(t *testing.T) {
	v := testsetup.Verifier(t, toolctx.Options{})
	for _, mode := range []struct {
		name      string
		stateless bool
		version   string
	}{
		{"stateless 2025-11-25", true, "2025-11-25"},
		{"session 2025-11-25", false, "2025-11-25"},
		{"stateless 2026-07-28", true, "2026-07-28"},
		{"session 2026-07-28", false, "2026-07-28"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			var runs atomic.Int32
			s := server(&runs)
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: mode.stateless})
			srv := testsetup.Serve(t, gosdk.Middleware(v)(h))
			p := &toolctxtest.Platform{}
			cs := connect(t, srv.URL, mode.version, p)
			// Before the server closes: a session's SSE stream stays open until then.
			defer cs.Close()
			for _, task := range []string{"task-a", "task-b"} {
				out, err := whoami(t, cs, p, task)
				if err != nil || out.TaskID != task {
					t.Fatalf("%s: %+v %v", task, out, err)
				}
			}
			before := runs.Load()
			if out, err := whoami(t, cs, p, ""); err == nil {
				t.Fatalf("a call without a token was answered: %+v", out)
			}
			// A forged context header is removed before the SDK sees it.
			p.SetHeader(http.Header{gosdk.Header: {"forged {\"task_id\":\"x\"}"}})
			if _, err := whoami(t, cs, p, ""); err == nil {
				t.Fatal("a forged context header got a call through")
			}
			p.SetHeader(nil)
			if runs.Load() != before {
				t.Fatalf("refused calls ran: %d", runs.Load()-before)
			}
		})
	}
}

func TestWithoutTheMiddlewareFromRequestFails(t *testing.T) {
	var runs atomic.Int32
	s := server(&runs)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	srv := testsetup.Serve(t, h)
	p := &toolctxtest.Platform{}
	p.SetHeader(http.Header{gosdk.Header: {"forged {\"task_id\":\"x\"}"}})
	cs := connect(t, srv.URL, "2025-11-25", p)
	defer cs.Close()
	out, err := whoami(t, cs, p, "task-a")
	if err != nil || out.TaskID != "" || out.Error != toolctx.ErrNoContext.Error() {
		t.Fatalf("%+v %v", out, err)
	}
}

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
