package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	toolctx "github.com/toolctx/toolctx/go"
)

// seen is what reached the server behind the middleware for one case.
type seen struct {
	reached bool
	context []byte
	header  http.Header
}

// server is one go-sdk server (stateless streamable HTTP) behind a
// middleware per case: /case/<n> is routed through case n's verifier.
type server struct {
	http  *http.Server
	url   string
	mu    sync.Mutex
	cases map[int]*caseRoute
	// upstream is the go-sdk server's handler.
	upstream http.Handler
}

type caseRoute struct {
	handler http.Handler
	seen    seen
}

func startServer() (*server, error) {
	mcpServer := mcp.NewServer(&mcp.Implementation{Name: "toolctx-vectors", Version: "1"}, nil)
	type orderIn struct {
		OrderID string `json:"orderId"`
	}
	mcp.AddTool(mcpServer, &mcp.Tool{Name: "get_order", Description: "An order"},
		func(ctx context.Context, req *mcp.CallToolRequest, in orderIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.OrderID}}}, nil, nil
		})
	upstream := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcpServer }, &mcp.StreamableHTTPOptions{Stateless: true})
	s := &server{cases: map[int]*caseRoute{}}
	s.http = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/case/"))
		s.mu.Lock()
		route := s.cases[n]
		s.mu.Unlock()
		if err != nil || route == nil {
			http.NotFound(w, r)
			return
		}
		route.handler.ServeHTTP(w, r)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.url = "http://" + ln.Addr().String()
	go func() { _ = s.http.Serve(ln) }()
	s.upstream = upstream
	return s, nil
}

// route mounts case n: the verifier's middleware, then a recorder of what
// reached the server, then the go-sdk handler.
func (s *server) route(n int, v *toolctx.Verifier) *caseRoute {
	route := &caseRoute{}
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route.seen = seen{reached: true, context: toolctx.ContextJSON(r.Context()), header: r.Header.Clone()}
		s.upstream.ServeHTTP(w, r)
	})
	route.handler = toolctx.Middleware(v)(record)
	s.mu.Lock()
	s.cases[n] = route
	s.mu.Unlock()
	return route
}

func (s *server) unroute(n int) {
	s.mu.Lock()
	delete(s.cases, n)
	s.mu.Unlock()
}

func (s *server) Close() { _ = s.http.Close() }

func (s *server) caseURL(n int) string { return fmt.Sprintf("%s/case/%d", s.url, n) }
