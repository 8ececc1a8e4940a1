package toolctx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolctx/toolctx/go/toolctxtest"
)

const (
	instanceID = "go-test-instance"
	secret     = "go-test-secret-0123456789abcdef-0123"
)

func newVerifier(t testing.TB, o Options) *Verifier {
	t.Helper()
	o.InstanceID, o.Secrets = instanceID, []string{secret}
	v, err := NewVerifier(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

// upstream records what reached it.
type upstream struct {
	mu      sync.Mutex
	calls   int
	body    []byte
	header  http.Header
	context *Context
	ctxErr  error
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c, err := FromContext(r.Context())
	u.mu.Lock()
	u.calls++
	u.body, u.header, u.context, u.ctxErr = body, r.Header.Clone(), c, err
	u.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func post(h http.Handler, body []byte, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func reason(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct {
		Error struct {
			Data struct{ Reason string } `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("refusal body %q: %v", w.Body.String(), err)
	}
	return body.Error.Data.Reason
}

func TestAcceptedCallCarriesTheContextAndTheBody(t *testing.T) {
	u := &upstream{}
	h := Middleware(newVerifier(t, Options{}))(u)
	call := toolctxtest.NewCall(instanceID, "task-1", "get_order", time.Now())
	body := call.Body(7, "get_order", map[string]any{"orderId": "A-1"})
	w := post(h, body, map[string]string{"X-AgentArea-Context": call.Token(secret)})
	if w.Code != http.StatusNoContent || u.calls != 1 {
		t.Fatalf("status %d, %d calls: %s", w.Code, u.calls, w.Body)
	}
	if !bytes.Equal(u.body, body) {
		t.Fatalf("body not replayed: %q", u.body)
	}
	if u.ctxErr != nil || u.context.TaskID != "task-1" || u.context.EndUserID != "user-42" || u.context.Tool != "get_order" {
		t.Fatalf("context %+v, %v", u.context, u.ctxErr)
	}
}

func TestRefusalsAreWrittenAsTheCoreRenderedThem(t *testing.T) {
	u := &upstream{}
	h := Middleware(newVerifier(t, Options{}))(u)
	call := toolctxtest.NewCall(instanceID, "task-1", "get_order", time.Now())
	body := call.Body(7, "get_order", map[string]any{})
	for name, header := range map[string]map[string]string{
		"token_missing":     {},
		"signature_invalid": {"X-AgentArea-Context": call.Token("another-secret-0123456789-0123456789")},
	} {
		w := post(h, body, header)
		if w.Code != http.StatusUnauthorized || reason(t, w) != name || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s", name, w.Code, w.Body)
		}
	}
	// Another tool than the token's.
	w := post(h, call.Body(8, "whoami", map[string]any{}), map[string]string{"X-AgentArea-Context": call.Token(secret)})
	if reason(t, w) != "tool_mismatch" {
		t.Errorf("tool_mismatch: %d %s", w.Code, w.Body)
	}
	if u.calls != 0 {
		t.Fatalf("a refused call reached the server %d times", u.calls)
	}
}

// countingBody counts the bytes read from it.
type countingBody struct {
	r    io.Reader
	read atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read.Add(int64(n))
	return n, err
}
func (b *countingBody) Close() error { return nil }

func TestHeadersFirst(t *testing.T) {
	u := &upstream{}
	cred := &Credential{Header: "authorization", Values: []string{"Bearer static-1"}}
	h := Middleware(newVerifier(t, Options{Credential: cred}))(u)
	// A wrong credential is refused before a byte of the body is read.
	body := &countingBody{r: strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Body = body
	r.Header.Set("Authorization", "Bearer wrong")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if reason(t, w) != "credential_invalid" || body.read.Load() != 0 {
		t.Fatalf("%d %s, %d body bytes read", w.Code, w.Body, body.read.Load())
	}
	// GET and DELETE go on unread.
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		body := &countingBody{r: strings.NewReader("garbage")}
		r := httptest.NewRequest(method, "/mcp", nil)
		r.Body = body
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusNoContent || string(u.body) != "garbage" || u.ctxErr == nil {
			t.Fatalf("%s: %d, upstream read %q", method, w.Code, u.body)
		}
	}
}

func TestBodyOverTheLimitIsRefusedUnread(t *testing.T) {
	u := &upstream{}
	v := newVerifier(t, Options{MaxBodyBytes: 1024})
	h := Middleware(v)(u)
	body := &countingBody{r: bytes.NewReader(bytes.Repeat([]byte{' '}, 1<<20))}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Body = body
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge || reason(t, w) != "body_too_large" || w.Header().Get("Connection") != "close" {
		t.Fatalf("%d %s %v", w.Code, w.Body, w.Header())
	}
	if n := body.read.Load(); n > 1025+32*1024 {
		t.Fatalf("read %d bytes of an oversized body", n)
	}
}

func TestForwardedHeaders(t *testing.T) {
	u := &upstream{}
	h := Middleware(newVerifier(t, Options{Forward: &Forward{Headers: map[string]string{"task_id": "x-toolctx-task-id"}}}))(u)
	call := toolctxtest.NewCall(instanceID, "task-9", "get_order", time.Now())
	post(h, call.Body(1, "get_order", map[string]any{}), map[string]string{"X-AgentArea-Context": call.Token(secret), "X-Toolctx-Task-Id": "spoofed"})
	if got := u.header.Values("X-Toolctx-Task-Id"); len(got) != 1 || got[0] != "task-9" {
		t.Fatalf("accepted: %q", got)
	}
	r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	r.Header.Add("x-toolctx-task-id", "spoofed")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got := u.header.Values("X-Toolctx-Task-Id"); len(got) != 0 {
		t.Fatalf("passed: %q", got)
	}
}

// The capacity is the core's to read: 0 its default, 1 to 4294967295
// itself, anything else refused with the core's own code and message (a
// check of Go's own would answer another message).
func TestMemoryReplayGuardCapacityIsTheCores(t *testing.T) {
	for _, ok := range []int{0, 1, 4294967295} {
		if _, err := MemoryReplayGuard(ok); err != nil {
			t.Fatalf("capacity %d: %v", ok, err)
		}
	}
	for _, refused := range []int{-1, 4294967296, int(^uint(0) >> 1)} {
		_, err := MemoryReplayGuard(refused)
		var e *Error
		if !errors.As(err, &e) || e.Code != "limit_out_of_range" || e.Message != "setting `replay_capacity` is out of range" {
			t.Fatalf("capacity %d: %v", refused, err)
		}
	}
}

func TestMemoryReplayGuardAcrossThePool(t *testing.T) {
	guard, err := MemoryReplayGuard(0)
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{}
	h := Middleware(newVerifier(t, Options{ReplayGuard: guard}))(u)
	call := toolctxtest.NewCall(instanceID, "task-1", "get_order", time.Now())
	body, token := call.Body(1, "get_order", map[string]any{}), call.Token(secret)
	// The same token from many goroutines (so many instances): one runs.
	var wg sync.WaitGroup
	var accepted, replayed atomic.Int32
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := post(h, body, map[string]string{"X-AgentArea-Context": token})
			switch {
			case w.Code == http.StatusNoContent:
				accepted.Add(1)
			case strings.Contains(w.Body.String(), `"token_replayed"`):
				replayed.Add(1)
			}
		}()
	}
	wg.Wait()
	if accepted.Load() != 1 || replayed.Load() != 15 {
		t.Fatalf("accepted %d, replayed %d", accepted.Load(), replayed.Load())
	}
}

// failingStore fails every claim.
type failingStore struct{}

func (failingStore) FirstUse(context.Context, string, int64, int64) (string, error) {
	return "", errors.New("store down")
}

func TestAFailedStoreRefuses(t *testing.T) {
	u := &upstream{}
	h := Middleware(newVerifier(t, Options{ReplayGuard: failingStore{}}))(u)
	call := toolctxtest.NewCall(instanceID, "task-1", "get_order", time.Now())
	w := post(h, call.Body(1, "get_order", map[string]any{}), map[string]string{"X-AgentArea-Context": call.Token(secret)})
	if w.Code != http.StatusInternalServerError || reason(t, w) != "internal_error" || u.calls != 0 {
		t.Fatalf("%d %s, %d calls", w.Code, w.Body, u.calls)
	}
}

func TestATrappedInstanceIsDroppedAndRefused(t *testing.T) {
	u := &upstream{}
	v := newVerifier(t, Options{})
	h := Middleware(v)(u)
	// Break every idle instance as a trap would leave it.
	for range v.pool.limit {
		in, err := v.pool.get()
		if err != nil {
			t.Fatal(err)
		}
		_ = in.mod.Close(t.Context())
		v.pool.put(in)
	}
	call := toolctxtest.NewCall(instanceID, "task-1", "get_order", time.Now())
	body, token := call.Body(1, "get_order", map[string]any{}), call.Token(secret)
	w := post(h, body, map[string]string{"X-AgentArea-Context": token})
	if w.Code != http.StatusInternalServerError || reason(t, w) != "internal_error" || u.calls != 0 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	// The broken instances are gone one by one; fresh ones serve again.
	var last *httptest.ResponseRecorder
	for range v.pool.limit + 1 {
		c := toolctxtest.NewCall(instanceID, "task-1", "get_order", time.Now())
		last = post(h, c.Body(1, "get_order", map[string]any{}), map[string]string{"X-AgentArea-Context": c.Token(secret)})
	}
	if last.Code != http.StatusNoContent {
		t.Fatalf("after the traps: %d %s", last.Code, last.Body)
	}
}

func TestConfigurationErrorsAreTheCores(t *testing.T) {
	_, err := NewVerifier(Options{InstanceID: instanceID})
	var e *Error
	if !errors.As(err, &e) || e.Code == "" || strings.Contains(err.Error(), secret) {
		t.Fatalf("%v", err)
	}
	_, err = NewVerifier(Options{Config: json.RawMessage(`{"instance_id":"x","secrets":["` + secret + `"],"clock_skew_s":"30"}`)})
	if !errors.As(err, &e) || e.Code != "config_type" {
		t.Fatalf("%v", err)
	}
	v := newVerifier(t, Options{})
	if strings.Contains(v.String(), secret) {
		t.Fatalf("the description holds the secret: %s", v)
	}
}
