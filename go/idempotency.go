package toolctx

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// IdempotencyStore keeps the idempotency helper's entries (CONTRACT §5.1)
// as the core encodes them: Claim stores entry under key for leaseMs
// unless an entry is there, and answers that entry ("" when the claim
// took); Complete stores the done entry for ttlMs; Release removes key
// when it still holds exactly entry (this call's running entry).
type IdempotencyStore interface {
	Claim(ctx context.Context, key, entry string, leaseMs int64) (held string, err error)
	Complete(ctx context.Context, key, entry string, ttlMs int64) error
	Release(ctx context.Context, key, entry string) error
}

// IdempotencyDefaults are the core's (idem_defaults).
type IdempotencyDefaults struct {
	KeyPrefix      string `json:"keyPrefix"`
	TTLMs          int64  `json:"ttlMs"`
	LeaseMs        int64  `json:"leaseMs"`
	WaitMs         int64  `json:"waitMs"`
	MemoryEntries  int    `json:"memoryEntries"`
	StoreTimeoutMs int64  `json:"storeTimeoutMs"`
	ClaimRounds    int    `json:"claimRounds"`
	Replayed       string `json:"replayed"`
}

// CoreIdempotencyDefaults asks the core for its idempotency defaults.
func CoreIdempotencyDefaults() (IdempotencyDefaults, error) {
	return withHelpers(func(in *instance) (IdempotencyDefaults, error) {
		var d IdempotencyDefaults
		out, err := in.call("toolctx_idem_defaults", nil)
		if err == nil {
			err = json.Unmarshal(out, &d)
		}
		return d, err
	})
}

// IdempotencyOptions of Idempotency, read by the core's settings table
// (docs/CONTRACT.md, "Settings"): 0 is its default, a number out of its
// range is refused.
type IdempotencyOptions struct {
	Store     IdempotencyStore // default: a MemoryIdempotencyStore
	TTLMs     int64
	LeaseMs   int64
	WaitMs    int64
	Namespace string
}

// Idempotency runs a tool call at most once per verified idempotency key:
// a retry gets the first result back, the same key with other arguments a
// conflict refusal, a retry while the first still runs waits, then an
// in-progress refusal. Every rule is the core's.
type Idempotency struct {
	o IdempotencyOptions
}

// NewIdempotency readies the helper.
func NewIdempotency(o IdempotencyOptions) (*Idempotency, error) {
	var err error
	if o.Store == nil {
		if o.Store, err = NewMemoryIdempotencyStore(0); err != nil {
			return nil, err
		}
	}
	for _, s := range []struct {
		name string
		ms   *int64
	}{{"idempotency_ttl_ms", &o.TTLMs}, {"idempotency_lease_ms", &o.LeaseMs}, {"idempotency_wait_ms", &o.WaitMs}} {
		if *s.ms, err = settingNumber(s.name, *s.ms); err != nil {
			return nil, err
		}
	}
	return &Idempotency{o: o}, nil
}

func helperText(op string, fields ...[]byte) (string, error) {
	return withHelpers(func(in *instance) (string, error) { return in.text(op, fields) })
}

// Refusal is the core's refusal result (a CallToolResult's JSON) for
// outcome (conflict, in_progress, unverified) on key.
func (i *Idempotency) Refusal(outcome, key string) ([]byte, error) {
	s, err := helperText("toolctx_idem_refusal", []byte(outcome), []byte(key))
	return []byte(s), err
}

// ErrIdempotencyStore: the store failed before the tool ran (it did not run).
var ErrIdempotencyStore = errors.New("toolctx: idempotent: the store failed, the tool did not run")

// Run runs the call with the verified idempotency key and its arguments
// (JSON) at most once: run answers the result's JSON and whether to keep
// it (false: release the key, e.g. an error result to retry). Answers the
// result to return: run's, the stored one (marked replayed and written for
// revision, the call's protocol revision, "" when none is known, by the
// core), or the core's refusal.
func (i *Idempotency) Run(ctx context.Context, idempotencyKey, revision string, arguments []byte, run func(context.Context) ([]byte, bool, error)) ([]byte, error) {
	key, err := helperText("toolctx_idem_store_key", []byte(i.o.Namespace), []byte(idempotencyKey))
	if err != nil {
		return nil, err
	}
	if len(arguments) == 0 {
		arguments = []byte("{}")
	}
	hash, err := helperText("toolctx_idem_argument_hash", arguments)
	if err != nil {
		return nil, err
	}
	mine, err := helperText("toolctx_idem_running", []byte(hash), []byte(rand.Text()))
	if err != nil {
		return nil, err
	}
	start := time.Now()
	for round := 0; ; round++ {
		held, err := i.o.Store.Claim(ctx, key, mine, i.o.LeaseMs)
		if err != nil {
			return nil, errors.Join(ErrIdempotencyStore, err)
		}
		if held == "" {
			break
		}
		answer, err := helperText("toolctx_idem_held", []byte(held), []byte(hash), []byte(revision))
		if err != nil {
			return nil, err
		}
		switch {
		case answer == "c":
			return i.Refusal("conflict", idempotencyKey)
		case len(answer) > 0 && answer[0] == 'r':
			return []byte(answer[1:]), nil
		}
		pause, err := withHelpers(func(in *instance) (int64, error) {
			return in.number("toolctx_idem_wait", uint64(time.Since(start).Milliseconds()), uint64(i.o.WaitMs), uint64(round))
		})
		if err != nil {
			return nil, err
		}
		if pause < 0 {
			return i.Refusal("in_progress", idempotencyKey)
		}
		select {
		case <-ctx.Done():
			return i.Refusal("in_progress", idempotencyKey)
		case <-time.After(time.Duration(pause) * time.Millisecond):
		}
	}
	result, keep, err := run(ctx)
	if err != nil || !keep {
		// The store's failure here is not the call's: the tool ran.
		_ = i.o.Store.Release(context.WithoutCancel(ctx), key, mine)
		return result, err
	}
	done, derr := helperText("toolctx_idem_done", []byte(hash), result)
	if derr == nil {
		_ = i.o.Store.Complete(context.WithoutCancel(ctx), key, done, i.o.TTLMs)
	} else {
		_ = i.o.Store.Release(context.WithoutCancel(ctx), key, mine)
	}
	return result, nil
}

// MemoryIdempotencyStore keeps entries in this process: the core's store
// (expiry, capacity, the release rule: CONTRACT §5.1) on a helpers
// instance of its own, called under one lock with the host's clock.
type MemoryIdempotencyStore struct {
	mu       sync.Mutex
	in       *instance
	now      func() int64 // Unix ms
	capacity int
}

// NewMemoryIdempotencyStore is a store for at most entries entries, read
// by the core's settings table (idempotency_memory_entries: 0 its default,
// a number out of range refused).
func NewMemoryIdempotencyStore(entries int) (*MemoryIdempotencyStore, error) {
	return newMemoryStore(entries, func() int64 { return time.Now().UnixMilli() })
}

// newMemoryStore is the store for the user's raw capacity (as Setting
// takes it) on the clock now.
func newMemoryStore(raw any, now func() int64) (*MemoryIdempotencyStore, error) {
	in, err := newInstance(helpersWasm, &shared().helpers)
	if err != nil {
		return nil, err
	}
	kind, number, text := rawSetting(raw)
	out, err := in.text("toolctx_idem_memory", [][]byte{[]byte(text)}, uint64(kind), math.Float64bits(number))
	if err != nil {
		in.close()
		return nil, err
	}
	capacity, _ := strconv.Atoi(out)
	return &MemoryIdempotencyStore{in: in, now: now, capacity: capacity}, nil
}

// ask runs one of the store's operations with the numbers ms, then now.
// A trap leaves the instance dead: every later call fails (closed).
func (m *MemoryIdempotencyStore) ask(op string, fields []string, ms ...int64) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var in [][]byte
	for _, f := range fields {
		in = append(in, []byte(f))
	}
	var params []uint64
	for _, n := range append(ms, m.now()) {
		params = append(params, uint64(n))
	}
	return m.in.text(op, in, params...)
}

func (m *MemoryIdempotencyStore) Claim(_ context.Context, key, entry string, leaseMs int64) (string, error) {
	held, err := m.ask("toolctx_idem_memory_claim", []string{key, entry}, leaseMs)
	switch {
	case err != nil || held == "n":
		return "", err
	case strings.HasPrefix(held, "h"):
		return held[1:], nil
	}
	return "", errors.New("toolctx: the core's store answered neither n nor h")
}

func (m *MemoryIdempotencyStore) Complete(_ context.Context, key, entry string, ttlMs int64) error {
	_, err := m.ask("toolctx_idem_memory_complete", []string{key, entry}, ttlMs)
	return err
}

func (m *MemoryIdempotencyStore) Release(_ context.Context, key, entry string) error {
	_, err := m.ask("toolctx_idem_memory_release", []string{key, entry})
	return err
}

// IdempotencyRedisArgs is the core's Redis command for a store command
// (claim, read, complete, release) on the Redis key.
func IdempotencyRedisArgs(command, key, entry string, ms int64) ([]string, error) {
	return withHelpers(func(in *instance) ([]string, error) {
		return in.listOf("toolctx_idem_redis_args", [][]byte{[]byte(command), []byte(key), []byte(entry)}, uint64(ms))
	})
}

// IdempotencyRedisMeaning is what the core reads in Redis's reply to a
// store command: claimed, taken, held, gone, stored, released, not_held
// or failed.
func IdempotencyRedisMeaning(command, kind string, value []byte) (string, error) {
	return helperText("toolctx_idem_redis_meaning", []byte(command), []byte(kind), value)
}

// IdempotencyRedisKey is the Redis key of a store key under prefix.
func IdempotencyRedisKey(prefix, storeKey string) (string, error) {
	return helperText("toolctx_idem_redis_key", []byte(prefix), []byte(storeKey))
}
