package main

// The official go-sdk client against this example, built and started as
// a user would run it: accepted calls with their verified context, a
// refused call that never runs, progress, and an idempotent retry, in the
// SDK's stateless and session modes and at 2026-07-28.

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolctx/toolctx/go/toolctxtest"
)

const (
	instanceID = "go-example-test"
	secret     = "go-example-test-secret-0123456789abcdef"
)

func start(t *testing.T, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "go-server")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"--port", "0", "--exit-with-stdin"}, flags...)...)
	cmd.Env = append(os.Environ(), "TOOLCTX_INSTANCE_ID="+instanceID, "TOOLCTX_SECRET="+secret)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		t.Fatalf("the example did not start: %q", line)
	}
	return url
}

// call mints a token for tool on task (claims and _meta from one context,
// as the platform sends them) and calls the tool.
func call(t *testing.T, cs *mcp.ClientSession, p *toolctxtest.Platform, tool, task, callID string, args map[string]any, progress bool) (*mcp.CallToolResult, error) {
	t.Helper()
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	p.SetToken("")
	if task != "" {
		c := toolctxtest.NewCall(instanceID, task, tool, time.Now()).WithCallID(callID)
		meta := mcp.Meta(c.Meta)
		if progress {
			meta["progressToken"] = "p-1"
		}
		params.Meta = meta
		p.SetToken(c.Token(secret))
	}
	return cs.CallTool(t.Context(), params)
}

func TestGoSDKClientAgainstTheExample(t *testing.T) {
	for _, mode := range []struct {
		name    string
		flags   []string
		version string
	}{
		{"stateless", []string{"--stateless"}, "2025-11-25"},
		{"session", nil, "2025-11-25"},
		{"2026-07-28", nil, "2026-07-28"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			url := start(t, mode.flags...)
			var mu sync.Mutex
			var progress []float64
			client := mcp.NewClient(&mcp.Implementation{Name: "example-test", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					progress = append(progress, req.Params.Progress)
					mu.Unlock()
				},
			})
			p := &toolctxtest.Platform{}
			cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: p}},
				&mcp.ClientSessionOptions{ProtocolVersion: mode.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := call(t, cs, p, "get_order", "task-a", "call-1", map[string]any{"orderId": "A-1"}, false)
			if err != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "task task-a for user-42") {
				t.Fatalf("get_order: %v %+v", err, res)
			}
			if _, err := call(t, cs, p, "whoami", "", "", map[string]any{}, false); err == nil {
				t.Fatal("a call without a token was answered")
			}
			_, err = call(t, cs, p, "export_report", "task-b", "call-2", map[string]any{"pages": 2}, true)
			// The client hands notifications to the handler on its own
			// goroutine: the last may land just after the result.
			var got []float64
			for range 50 {
				mu.Lock()
				got = append([]float64(nil), progress...)
				mu.Unlock()
				if len(got) > 0 && got[len(got)-1] == 2 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err != nil || len(got) == 0 || got[len(got)-1] != 2 {
				t.Fatalf("export_report: %v, progress %v", err, got)
			}
			first, err1 := call(t, cs, p, "create_invoice", "task-c", "call-3", map[string]any{"amount": 42}, false)
			retry, err2 := call(t, cs, p, "create_invoice", "task-c", "call-3", map[string]any{"amount": 42}, false)
			if err1 != nil || err2 != nil || first.Meta[gosdkReplayed] != nil || retry.Meta[gosdkReplayed] != true {
				t.Fatalf("create_invoice: %v %v %+v %+v", err1, err2, first, retry)
			}
		})
	}
}

const gosdkReplayed = "agentarea/replayed"
