package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	toolctx "github.com/toolctx/toolctx/go"
	"github.com/toolctx/toolctx/go/redisstore"
	"github.com/toolctx/toolctx/go/toolctxtest"
)

const (
	instanceID = "go-redis-test"
	secret     = "go-redis-test-secret-0123456789abcdef"
)

// startRedis runs Debian's redis-server on a free 127.0.0.1 port for the
// test; skipped without it unless TOOLCTX_REQUIRE_REDIS is set.
func startRedis(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("TOOLCTX_REQUIRE_REDIS") != "" {
			t.Fatal("redis-server is required (TOOLCTX_REQUIRE_REDIS)")
		}
		t.Skip("no redis-server")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return cmd, addr
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return nil, ""
}

type replica struct {
	h    http.Handler
	runs *atomic.Int32
}

func newReplica(t *testing.T, client *redis.Client) replica {
	t.Helper()
	store, err := redisstore.NewReplay(client, redisstore.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := toolctx.NewVerifier(toolctx.Options{InstanceID: instanceID, Secrets: []string{secret}, ReplayGuard: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	runs := &atomic.Int32{}
	h := toolctx.Middleware(v)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	return replica{h: h, runs: runs}
}

func call(h http.Handler, c toolctxtest.Call) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(c.Body(1, "get_order", map[string]any{})))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-AgentArea-Context", c.Token(secret))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func reasonOf(w *httptest.ResponseRecorder) string {
	s := w.Body.String()
	if i := strings.Index(s, `"reason":"`); i >= 0 {
		s = s[i+len(`"reason":"`):]
		return s[:strings.IndexByte(s, '"')]
	}
	return fmt.Sprint(w.Code)
}

func client(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
}

func TestReplicasShareTheCoresKeys(t *testing.T) {
	_, addr := startRedis(t)
	a, b := newReplica(t, client(addr)), newReplica(t, client(addr))
	c := toolctxtest.NewCall(instanceID, "task-1", "get_order", time.Now())
	if w := call(a.h, c); w.Code != http.StatusNoContent {
		t.Fatalf("first use: %d %s", w.Code, w.Body)
	}
	if w := call(b.h, c); reasonOf(w) != "token_replayed" {
		t.Fatalf("replay on the other replica: %d %s", w.Code, w.Body)
	}
	// The key is the core's (the one the Node, Python and Rust servers use).
	defaults, _ := toolctx.CoreReplayDefaults()
	ttl, err := client(addr).PTTL(context.Background(), defaults.RedisKeyPrefix+c.Claims["jti"].(string)).Result()
	if err != nil || ttl <= 0 {
		t.Fatalf("the claim's key: ttl %v, %v", ttl, err)
	}
	// Concurrent replays of one token across both replicas: one runs.
	c2 := toolctxtest.NewCall(instanceID, "task-2", "get_order", time.Now())
	var wg sync.WaitGroup
	var ok atomic.Int32
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w := call([]replica{a, b}[i%2].h, c2); w.Code == http.StatusNoContent {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 {
		t.Fatalf("%d of 20 replays ran", ok.Load())
	}
}

func TestARetryingClientIsRefused(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	if _, err := redisstore.NewReplay(c, redisstore.ReplayOptions{}); err == nil {
		t.Fatal("a client that retries commands was taken for the replay store")
	}
	if _, err := redisstore.NewIdempotency(c, redisstore.IdempotencyOptions{}); err == nil {
		t.Fatal("a client that retries commands was taken for the idempotency store")
	}
}

func TestTimeoutIsTheCoresRule(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer c.Close()
	for d, want := range map[time.Duration]time.Duration{
		0:                              500 * time.Millisecond,
		time.Millisecond:               time.Millisecond,
		1500 * time.Microsecond:        2 * time.Millisecond,
		1499 * time.Microsecond:        time.Millisecond,
		time.Minute:                    time.Minute,
		time.Minute + time.Microsecond: time.Minute,
	} {
		if got, err := toolctx.RedisTimeout(d); err != nil || got != want {
			t.Fatalf("RedisTimeout(%v) = %v, %v; want %v", d, got, err, want)
		}
		if _, err := redisstore.NewReplay(c, redisstore.ReplayOptions{Timeout: d}); err != nil {
			t.Fatalf("replay store, %v: %v", d, err)
		}
		if _, err := redisstore.NewIdempotency(c, redisstore.IdempotencyOptions{Timeout: d}); err != nil {
			t.Fatalf("idempotency store, %v: %v", d, err)
		}
	}
	refused := func(what string, d time.Duration, err error) {
		t.Helper()
		var e *toolctx.Error
		if !errors.As(err, &e) || e.Code != "limit_out_of_range" || e.Message != "setting `store_timeout_ms` is out of range" {
			t.Fatalf("%s, %v: %v", what, d, err)
		}
	}
	for _, d := range []time.Duration{-time.Millisecond, 400 * time.Microsecond, time.Minute + time.Millisecond, time.Hour} {
		_, err := redisstore.NewReplay(c, redisstore.ReplayOptions{Timeout: d})
		refused("replay store", d, err)
		_, err = redisstore.NewIdempotency(c, redisstore.IdempotencyOptions{Timeout: d})
		refused("idempotency store", d, err)
	}
}

func TestPausedAndKilledRedisRefuses(t *testing.T) {
	cmd, addr := startRedis(t)
	r := newReplica(t, client(addr))
	if w := call(r.h, toolctxtest.NewCall(instanceID, "task-1", "get_order", time.Now())); w.Code != http.StatusNoContent {
		t.Fatalf("before: %d %s", w.Code, w.Body)
	}
	before := r.runs.Load()
	// Paused: every call refused internal_error (the core's store timeout
	// ends the wait; a hang would end the test at its own timeout).
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := toolctxtest.NewCall(instanceID, "task-2", "get_order", time.Now())
	if w := call(r.h, paused); reasonOf(w) != "internal_error" || w.Code != http.StatusInternalServerError {
		t.Fatalf("paused: %d %s", w.Code, w.Body)
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	// The same token after Redis is back: never run twice (the late claim
	// may have landed: refused token_replayed), or run once.
	time.Sleep(100 * time.Millisecond)
	w := call(r.h, paused)
	if w.Code != http.StatusNoContent && reasonOf(w) != "token_replayed" {
		t.Fatalf("after the pause: %d %s", w.Code, w.Body)
	}
	if w := call(r.h, toolctxtest.NewCall(instanceID, "task-3", "get_order", time.Now())); w.Code != http.StatusNoContent {
		t.Fatalf("recovered: %d %s", w.Code, w.Body)
	}
	runsAfterPause := r.runs.Load()
	// Killed: refused, never run unguarded.
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if w := call(r.h, toolctxtest.NewCall(instanceID, "task-4", "get_order", time.Now())); reasonOf(w) != "internal_error" {
		t.Fatalf("killed: %d %s", w.Code, w.Body)
	}
	if r.runs.Load() != runsAfterPause || runsAfterPause > before+2 {
		t.Fatalf("runs: %d before, %d after the pause, %d after the kill", before, runsAfterPause, r.runs.Load())
	}
}
