package toolctx

import (
	"context"
	"math"
	"strconv"
	"sync"
	"time"
)

// ReplayStore answers the core's replay claims (CONTRACT §3): record jti
// as used until `until` (Unix seconds; now is the verifier's clock) and
// answer one of the core's ClaimAnswer names: "first_use", "used", "full"
// or "failed". An error, or any other answer, is "failed"; the core
// decides what each means (token_replayed, replay_guard_full,
// internal_error). FirstUse must be atomic across every process sharing
// the store.
type ReplayStore interface {
	FirstUse(ctx context.Context, jti string, until, now int64) (string, error)
}

// ReplayGuard is what Options.ReplayGuard takes: MemoryReplayGuard, or a
// shared ReplayStore such as redisstore.ReplayStore.
type ReplayGuard = ReplayStore

// memoryGuard is the core's in-memory guard (its ReplayCache) on an
// instance of its own, which every pooled verifier instance claims through.
type memoryGuard struct {
	mu sync.Mutex
	in *instance
}

// MemoryReplayGuard is the replay guard for a server with one process: the
// core's bounded cache of live token ids; capacity 0 is the core's default,
// and the core refuses a capacity outside the range of replay_capacity in
// its settings table (docs/CONTRACT.md §5.3) (limit_out_of_range). When all are live, fresh tokens are refused
// replay_guard_full.
func MemoryReplayGuard(capacity int) (ReplayStore, error) {
	in, err := newInstance(verifierWasm, &shared().verifier)
	if err != nil {
		return nil, err
	}
	// The number as given: the core reads it (an i64 parameter).
	if _, err := in.text("toolctx_replay_memory", nil, uint64(int64(capacity))); err != nil {
		in.close()
		return nil, err
	}
	return &memoryGuard{in: in}, nil
}

func (g *memoryGuard) FirstUse(_ context.Context, jti string, until, now int64) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.in.text("toolctx_replay_first_use", [][]byte{[]byte(jti)}, uint64(until), uint64(now))
}

// core is one verifier-module instance for the core's vocabulary (Redis
// commands and replies, names, defaults): not per request, so one
// mutex-guarded instance serves them all.
var core = &single{code: verifierWasm, module: func(e *engine) *lazyModule { return &e.verifier }}

func withCore[T any](f func(*instance) (T, error)) (T, error) { return withSingle(core, f) }

// ReplayDefaults are the core's: the Redis key prefix, the in-memory
// capacity and the store timeout.
type ReplayDefaults struct {
	RedisKeyPrefix string
	Capacity       int
	TimeoutMs      int
}

// CoreReplayDefaults asks the core for its replay defaults.
func CoreReplayDefaults() (ReplayDefaults, error) {
	return withCore(func(in *instance) (ReplayDefaults, error) {
		items, err := in.listOf("toolctx_replay_defaults", nil)
		if err != nil {
			return ReplayDefaults{}, err
		}
		if len(items) != 3 {
			return ReplayDefaults{}, &Error{Code: "internal", Message: "the core's replay defaults are not three fields"}
		}
		capacity, err1 := strconv.Atoi(items[1])
		timeout, err2 := strconv.Atoi(items[2])
		if err1 != nil || err2 != nil {
			return ReplayDefaults{}, &Error{Code: "internal", Message: "the core's replay defaults are not numbers"}
		}
		return ReplayDefaults{RedisKeyPrefix: items[0], Capacity: capacity, TimeoutMs: timeout}, nil
	})
}

// RedisTimeout is the core's store timeout rule over a user's timeout for
// one Redis command: 0 is the core's default (500 ms); anything else is
// rounded to whole milliseconds and must come to 1 ms to 1 minute, or it is
// refused (limit_out_of_range).
func RedisTimeout(d time.Duration) (time.Duration, error) {
	return withCore(func(in *instance) (time.Duration, error) {
		out, err := in.text("toolctx_redis_timeout", nil, math.Float64bits(float64(d)/float64(time.Millisecond)))
		if err != nil {
			return 0, err
		}
		ms, err := strconv.ParseInt(out, 10, 64)
		if err != nil {
			return 0, &Error{Code: "internal", Message: "the core's store timeout is not a number"}
		}
		return time.Duration(ms) * time.Millisecond, nil
	})
}

// RedisClaimArgs is the Redis command the core claims jti with (until
// and now in Unix seconds).
func RedisClaimArgs(prefix, jti string, until, now int64) ([]string, error) {
	return withCore(func(in *instance) ([]string, error) {
		return in.listOf("toolctx_redis_claim_args", [][]byte{[]byte(prefix), []byte(jti)}, uint64(until), uint64(now))
	})
}

// RedisClaimAnswer is what the core reads in Redis's reply to the claim:
// kind is nil, status, bulk, integer, error or other.
func RedisClaimAnswer(kind string, value []byte) (string, error) {
	return withCore(func(in *instance) (string, error) {
		return in.text("toolctx_redis_claim_answer", [][]byte{[]byte(kind), value})
	})
}
