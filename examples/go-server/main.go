// An MCP server on the official Go SDK (github.com/modelcontextprotocol/go-sdk
// v1.8.0) whose tools/call requests are verified by toolctx (the core's
// wasm, run by wazero) before any tool runs: the Go twin of
// examples/node-server, with the same options, environment and output.
//
//	TOOLCTX_INSTANCE_ID=... TOOLCTX_SECRET=... go run ./examples/go-server [--port N]
//
// Options:
//
//	--port N             listen on 127.0.0.1:N (default $PORT, else a free port)
//	--no-verify          no toolctx at all (the unprotected copy)
//	--context-optional   require_context false: a tools/call with no token and
//	                     no agentarea/* keys in _meta passes without context
//	--stateless          the SDK's stateless mode for 2025-era clients (default:
//	                     sessions; 2026-07-28 clients are always served
//	                     statelessly: the SDK serves them no other way)
//	--tuix               forward the Tuix headers (CONTRACT §7)
//	--json-response      application/json answers instead of SSE streams
//	--exit-with-stdin    exit when standard input closes (test drivers)
//	--record FILE        one JSON line per request handed on to the SDK,
//	                     {"handed_on": method, "headers": [[name, value], ...],
//	                     "context": verified context or null}, and one per tool
//	                     run, {"run": tool, "headers": [...]}, each written
//	                     before the request goes on or the tool runs
//	--redis URL          the replay guard and create_invoice's results in Redis
//	                     (redis://127.0.0.1:PORT), shared with other replicas
//	                     and the other examples
//
// Environment: TOOLCTX_INSTANCE_ID and TOOLCTX_SECRET (required unless
// --no-verify), TOOLCTX_SECRET_PREVIOUS (accepted too: rotation),
// TOOLCTX_CREDENTIAL (a static credential in `authorization`).
//
// Tools: get_order, export_report (sends progress through the core's
// coalescer), create_invoice (an idempotent tool: a retry gets the first
// result back), whoami (the verified
// context and the x-toolctx-* headers a proxy added) and toolctx_probe (how
// many times it ran, for `toolctx conformance`). Prints
// `listening http://127.0.0.1:PORT/mcp` once it accepts connections.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	toolctx "github.com/toolctx/toolctx/go"
	"github.com/toolctx/toolctx/go/gosdk"
	"github.com/toolctx/toolctx/go/redisstore"
)

type options struct {
	port                                                   int
	noVerify, contextOptional, stateless, tuix, jsonAnswer bool
	exitWithStdin                                          bool
	record, redis                                          string
}

func main() {
	var o options
	port, _ := strconv.Atoi(os.Getenv("PORT"))
	flag.IntVar(&o.port, "port", port, "listen on 127.0.0.1:N")
	flag.BoolVar(&o.noVerify, "no-verify", false, "no toolctx at all")
	flag.BoolVar(&o.contextOptional, "context-optional", false, "require_context false")
	flag.BoolVar(&o.stateless, "stateless", false, "the SDK's stateless mode")
	flag.BoolVar(&o.tuix, "tuix", false, "forward the Tuix headers")
	flag.BoolVar(&o.jsonAnswer, "json-response", false, "application/json answers")
	flag.BoolVar(&o.exitWithStdin, "exit-with-stdin", false, "exit when standard input closes")
	flag.StringVar(&o.record, "record", "", "append what was handed on and what ran to FILE")
	flag.StringVar(&o.redis, "redis", "", "the replay guard in Redis")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "go-server:", err)
		os.Exit(1)
	}
}

// recorder appends JSON lines, synchronously: the line is there before
// anything answers.
type recorder struct {
	mu sync.Mutex
	f  *os.File
}

func (r *recorder) write(entry any) {
	if r.f == nil {
		return
	}
	line, _ := json.Marshal(entry)
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.f.Write(append(line, '\n'))
}

func pairs(h http.Header) [][2]string {
	out := [][2]string{}
	for name, values := range h {
		if name == gosdk.Header {
			continue
		}
		for _, v := range values {
			out = append(out, [2]string{strings.ToLower(name), v})
		}
	}
	return out
}

func run(o options) error {
	rec := &recorder{}
	if o.record != "" {
		f, err := os.OpenFile(o.record, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("--record %s: %w", o.record, err)
		}
		rec.f = f
	}
	server := newServer(o, rec)
	getServer := func(*http.Request) *mcp.Server { return server }
	sessions := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: o.stateless, JSONResponse: o.jsonAnswer})
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: o.jsonAnswer})
	// The SDK serves 2026-07-28 (per-request metadata) only statelessly:
	// those requests go there whatever the mode, as rmcp does.
	recorded := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28" {
			stateless.ServeHTTP(w, r)
			return
		}
		sessions.ServeHTTP(w, r)
	})
	var handler http.Handler
	handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rec.f != nil {
			var ctx any
			if raw := toolctx.ContextJSON(r.Context()); raw != nil {
				ctx = json.RawMessage(raw)
			}
			rec.write(map[string]any{"handed_on": r.Method, "headers": pairs(r.Header), "context": ctx})
		}
		recorded.ServeHTTP(w, r)
	})
	mode := " (verification off)"
	if !o.noVerify {
		v, err := verifier(o)
		if err != nil {
			return err
		}
		handler = gosdk.Middleware(v)(handler)
		mode = ""
		if o.contextOptional {
			mode = " (context optional)"
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", o.port))
	if err != nil {
		return err
	}
	fmt.Printf("listening http://%s/mcp%s\n", ln.Addr(), mode)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-stop; os.Exit(0) }()
	if o.exitWithStdin {
		go func() { _, _ = io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	}
	return http.Serve(ln, mux)
}

// verifier is the toolctx verifier from the environment; a configuration
// error names the problem, never the secret.
func verifier(o options) (*toolctx.Verifier, error) {
	var secrets []string
	for _, name := range []string{"TOOLCTX_SECRET", "TOOLCTX_SECRET_PREVIOUS"} {
		if s := os.Getenv(name); s != "" {
			secrets = append(secrets, s)
		}
	}
	opts := toolctx.Options{
		InstanceID: os.Getenv("TOOLCTX_INSTANCE_ID"),
		Secrets:    secrets,
		// One line per refusal on stderr, for the operator (never a token or secret).
		Telemetry: &toolctx.Telemetry{Logger: slog.New(slog.NewJSONHandler(os.Stderr, nil))},
	}
	if c := os.Getenv("TOOLCTX_CREDENTIAL"); c != "" {
		opts.Credential = &toolctx.Credential{Header: "authorization", Values: []string{c}}
	}
	if o.contextOptional {
		opts.RequireContext = toolctx.Bool(false)
	}
	if o.tuix {
		opts.Forward = &toolctx.Forward{Tuix: true}
	}
	if o.redis != "" {
		url, err := redis.ParseURL(o.redis)
		if err != nil {
			return nil, fmt.Errorf("--redis: %w", err)
		}
		// A claim is sent once, never retried (the store refuses a client that retries).
		url.MaxRetries = -1
		store, err := redisstore.NewReplay(redis.NewClient(url), redisstore.ReplayOptions{})
		if err != nil {
			return nil, err
		}
		opts.ReplayGuard = store
	}
	return toolctx.NewVerifier(opts)
}

type orderIn struct {
	OrderID string `json:"orderId"`
}

type reportIn struct {
	Pages int `json:"pages,omitempty" jsonschema:"pages to export, 1 to 20 (default 3)"`
}

type whoamiOut struct {
	VerifiedHere bool              `json:"verified_here"`
	Context      any               `json:"context"`
	ProxyHeaders map[string]string `json:"proxy_headers"`
}

type invoiceIn struct {
	Amount int `json:"amount"`
}

// invoices is create_invoice's idempotency helper: in Redis with --redis,
// shared with the other examples, else in this process.
func invoices(o options) *toolctx.Idempotency {
	opts := toolctx.IdempotencyOptions{}
	if o.redis != "" {
		url, err := redis.ParseURL(o.redis)
		if err != nil {
			fmt.Fprintln(os.Stderr, "go-server: --redis:", err)
			os.Exit(1)
		}
		url.MaxRetries = -1
		store, err := redisstore.NewIdempotency(redis.NewClient(url), redisstore.IdempotencyOptions{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "go-server:", err)
			os.Exit(1)
		}
		opts.Store = store
	}
	idem, err := toolctx.NewIdempotency(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-server:", err)
		os.Exit(1)
	}
	return idem
}

type probeOut struct {
	Runs int64 `json:"runs"`
}

func text(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }

func newServer(o options, rec *recorder) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "toolctx-example", Version: "1.0.0"}, nil)
	ran := func(name string, req *mcp.CallToolRequest) {
		rec.write(map[string]any{"run": name, "headers": pairs(req.Extra.Header)})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "get_order", Description: "Looks up an order; says which task asked for it"},
		func(ctx context.Context, req *mcp.CallToolRequest, in orderIn) (*mcp.CallToolResult, any, error) {
			ran("get_order", req)
			who := "no verified context"
			if c, err := gosdk.FromRequest(req); err == nil {
				who = "task " + c.TaskID
				if c.EndUserID != "" {
					who += " for " + c.EndUserID
				}
			}
			return &mcp.CallToolResult{Content: text(fmt.Sprintf("order %s: 2 items, shipped (%s)", in.OrderID, who))}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "export_report", Description: "Exports a report page by page, reporting progress"},
		func(ctx context.Context, req *mcp.CallToolRequest, in reportIn) (*mcp.CallToolResult, any, error) {
			ran("export_report", req)
			pages := in.Pages
			if pages == 0 {
				pages = 3
			}
			if pages < 1 || pages > 20 {
				return nil, nil, fmt.Errorf("pages must be from 1 to 20")
			}
			// Sent at the platform's relay rate (the core's coalescer), the last always.
			report, err := gosdk.NewProgress(ctx, req)
			if err != nil {
				return nil, nil, err
			}
			for page := 1; page <= pages; page++ {
				select {
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				case <-time.After(550 * time.Millisecond):
				}
				if err := report.Report(float64(page), float64(pages), fmt.Sprintf("page %d of %d", page, pages)); err != nil {
					return nil, nil, err
				}
			}
			if err := report.Done(); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: text(fmt.Sprintf("exported %d pages", pages))}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "What this server saw: the verified context and the x-toolctx-* headers a proxy added"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, whoamiOut, error) {
			ran("whoami", req)
			out := whoamiOut{VerifiedHere: !o.noVerify, ProxyHeaders: map[string]string{}}
			if c, err := gosdk.FromRequest(req); err == nil {
				out.Context = c
			}
			for _, kv := range pairs(req.Extra.Header) {
				if strings.HasPrefix(kv[0], "x-toolctx-") {
					out.ProxyHeaders[kv[0]] = kv[1]
				}
			}
			saw, _ := json.Marshal(out)
			return &mcp.CallToolResult{Content: text(string(saw))}, out, nil
		})
	// Process-wide, across calls: create_invoice's results (in Redis with --redis).
	mcp.AddTool(s, &mcp.Tool{Name: "create_invoice", Description: "Not safe to run twice: a retry gets the first result back"},
		gosdk.Idempotent(invoices(o), func(ctx context.Context, req *mcp.CallToolRequest, in invoiceIn) (*mcp.CallToolResult, any, error) {
			ran("create_invoice", req)
			key := ""
			if c, err := gosdk.FromRequest(req); err == nil {
				key = c.IdempotencyKey
			}
			out := map[string]any{"invoice": "inv-" + key, "amount": in.Amount}
			saw, _ := json.Marshal(out)
			return &mcp.CallToolResult{Content: text(string(saw)), StructuredContent: out}, nil, nil
		}))
	var probeRuns atomic.Int64
	mcp.AddTool(s, &mcp.Tool{Name: "toolctx_probe", Description: "Counts its own runs (toolctx conformance probe)"},
		// Any arguments: the conformance tools and hostile traffic send some.
		func(ctx context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, probeOut, error) {
			ran("toolctx_probe", req)
			out := probeOut{Runs: probeRuns.Add(1)}
			saw, _ := json.Marshal(out)
			return &mcp.CallToolResult{Content: text(string(saw))}, out, nil
		})
	return s
}
