package toolctxtest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	toolctx "github.com/toolctx/toolctx/go"
	"github.com/toolctx/toolctx/go/toolctxtest"
)

const secret = "toolctxtest-secret-0123456789abcdef"

// What the platform's server saw: the token header of each request.
func recorder(t *testing.T) (*httptest.Server, *[]string) {
	t.Helper()
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get(toolctxtest.Header)+"|"+r.Header.Get("X-Extra"))
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestPlatformPutsTheTokenOnToolCallsOnly(t *testing.T) {
	srv, seen := recorder(t)
	p := &toolctxtest.Platform{}
	client := &http.Client{Transport: p}
	post := func(body string) {
		t.Helper()
		res, err := client.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
	}
	p.SetToken("tok")
	post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`)
	post(`[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":3,"method":"tools/call"}]`)
	post(`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"note":"\"method\":\"tools/call\""}}`)
	p.SetHeader(http.Header{"X-Extra": {"x"}})
	post(`{"jsonrpc":"2.0","id":5,"method":"tools/call"}`)
	p.SetToken("")
	p.SetHeader(nil)
	post(`{"jsonrpc":"2.0","id":6,"method":"tools/call"}`)
	res, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	want := []string{"|", "tok|", "tok|", "|", "tok|x", "|", "|"}
	if fmt.Sprint(*seen) != fmt.Sprint(want) {
		t.Fatalf("headers seen %q, want %q", *seen, want)
	}
}

// A minted call is what toolctx accepts, and its variants keep claims and
// _meta equal.
func TestMintedCallsVerify(t *testing.T) {
	v, err := toolctx.NewVerifier(toolctx.Options{InstanceID: "srv-1", Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	verify := func(c toolctxtest.Call) *toolctx.Context {
		t.Helper()
		h := http.Header{"Content-Type": {"application/json"}, toolctxtest.Header: {c.Token(secret)}}
		verdict, err := v.Verify(context.Background(), http.MethodPost, h, c.Body(1, "get_order", map[string]any{}))
		if err != nil || verdict.Outcome != toolctx.Accept {
			t.Fatalf("refused: %v %+v", err, verdict.Refusal)
		}
		ctx, err := verdict.Context()
		if err != nil {
			t.Fatal(err)
		}
		return ctx
	}
	call := toolctxtest.NewCall("srv-1", "task-1", "get_order", time.Now())
	first := verify(call)
	retry := verify(call.WithCallID("call-9"))
	if retry.ToolCallID != "call-9" || retry.IdempotencyKey != "task-1:call-9" {
		t.Fatalf("WithCallID: %+v", retry)
	}
	again := verify(call.Reissued())
	if again.JTI == first.JTI || again.ToolCallID != first.ToolCallID {
		t.Fatalf("Reissued: %+v then %+v", first, again)
	}
	if call.Claims["tool_call_id"] != first.ToolCallID {
		t.Fatal("WithCallID changed the call it came from")
	}
}
