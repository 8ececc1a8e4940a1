package toolctx_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	toolctx "github.com/toolctx/toolctx/go"
	"github.com/toolctx/toolctx/go/toolctxtest"
)

// The middleware in front of any http.Handler: a refused call never
// reaches it; an accepted one carries its verified context.
func ExampleMiddleware() {
	secret := "example-secret-0123456789abcdef-0123"
	v, err := toolctx.NewVerifier(toolctx.Options{InstanceID: "srv-1", Secrets: []string{secret}})
	if err != nil {
		panic(err)
	}
	defer v.Close()
	h := toolctx.Middleware(v)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := toolctx.FromContext(r.Context())
		if err != nil {
			fmt.Println("no context:", err)
			return
		}
		fmt.Println("task", c.TaskID, "for", c.EndUserID)
	}))

	call := toolctxtest.NewCall("srv-1", "task-7", "get_order", time.Now())
	body := call.Body(1, "get_order", map[string]any{"orderId": "A-1"})
	for _, token := range []string{call.Token(secret), ""} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if token != "" {
			r.Header.Set("X-AgentArea-Context", token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			fmt.Println("refused", w.Code)
		}
	}
	// Output:
	// task task-7 for user-42
	// refused 401
}

// A configuration the core refuses names the problem with its code.
func ExampleNewVerifier() {
	_, err := toolctx.NewVerifier(toolctx.Options{InstanceID: "srv-1", Secrets: []string{"too short"}})
	fmt.Println(err.(*toolctx.Error).Code)
	// Output: secret_length
}

// The in-memory replay guard: a token runs once.
func ExampleMemoryReplayGuard() {
	secret := "example-secret-0123456789abcdef-0123"
	guard, err := toolctx.MemoryReplayGuard(0)
	if err != nil {
		panic(err)
	}
	v, err := toolctx.NewVerifier(toolctx.Options{InstanceID: "srv-1", Secrets: []string{secret}, ReplayGuard: guard})
	if err != nil {
		panic(err)
	}
	defer v.Close()
	call := toolctxtest.NewCall("srv-1", "task-7", "get_order", time.Now())
	header := http.Header{"Content-Type": {"application/json"}, "X-Agentarea-Context": {call.Token(secret)}}
	for range 2 {
		verdict, _ := v.Verify(context.Background(), http.MethodPost, header, call.Body(1, "get_order", map[string]any{}))
		if verdict.Outcome == toolctx.Reject {
			fmt.Println(verdict.Outcome, verdict.Refusal.Reason)
		} else {
			fmt.Println(verdict.Outcome)
		}
	}
	// Output:
	// accept
	// reject token_replayed
}
