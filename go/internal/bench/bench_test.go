package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	toolctx "github.com/toolctx/toolctx/go"
	"github.com/toolctx/toolctx/go/gosdk"
	"github.com/toolctx/toolctx/go/internal/testsetup"
	"github.com/toolctx/toolctx/go/toolctxtest"
)

// server is the same go-sdk server for the three: stateless, JSON answers.
func server() http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	type in struct {
		OrderID string `json:"orderId"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "get_order"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "order " + a.OrderID}}}, nil, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

func run(b *testing.B, h http.Handler) {
	call := toolctxtest.NewCall(testsetup.Instance, "task-bench", "get_order", time.Now())
	body := call.Body(1, "get_order", map[string]any{"orderId": "A-1"})
	token := call.Token(testsetup.Secret)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, testsetup.ToolCall(body, token))
		if w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

func BenchmarkPlain(b *testing.B) { run(b, server()) }

func BenchmarkToolctx(b *testing.B) {
	v := testsetup.Verifier(b, toolctx.Options{})
	run(b, gosdk.Middleware(v)(server()))
}

func BenchmarkHandwritten(b *testing.B) {
	run(b, handwritten([]byte(testsetup.Secret), testsetup.Instance, 1<<20)(server()))
}

// The middlewares alone, in front of a handler that does nothing: where
// their own time goes (bench/go.sh profile).
var noop = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})

func BenchmarkToolctxAlone(b *testing.B) {
	v := testsetup.Verifier(b, toolctx.Options{})
	run(b, gosdk.Middleware(v)(noop))
}

func BenchmarkHandwrittenAlone(b *testing.B) {
	run(b, handwritten([]byte(testsetup.Secret), testsetup.Instance, 1<<20)(noop))
}
