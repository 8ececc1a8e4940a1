package toolctx

import (
	lru "container/list"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
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
	d, err := CoreIdempotencyDefaults()
	if err != nil {
		return nil, err
	}
	if o.Store == nil {
		o.Store = NewMemoryIdempotencyStore(d.MemoryEntries)
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

// MemoryIdempotencyStore keeps entries in this process, at most max (the
// least recently used goes first), each until its time.
type MemoryIdempotencyStore struct {
	mu      sync.Mutex
	max     int
	order   *lru.List
	entries map[string]*lru.Element
}

type memEntry struct {
	key, text string
	expires   time.Time
}

// NewMemoryIdempotencyStore is a store for at most max entries (the
// core's default: CoreIdempotencyDefaults().MemoryEntries).
func NewMemoryIdempotencyStore(max int) *MemoryIdempotencyStore {
	return &MemoryIdempotencyStore{max: max, order: lru.New(), entries: map[string]*lru.Element{}}
}

func (m *MemoryIdempotencyStore) live(key string) (string, bool) {
	e, ok := m.entries[key]
	if !ok {
		return "", false
	}
	if !e.Value.(*memEntry).expires.After(time.Now()) {
		m.order.Remove(e)
		delete(m.entries, key)
		return "", false
	}
	m.order.MoveToBack(e)
	return e.Value.(*memEntry).text, true
}

func (m *MemoryIdempotencyStore) put(key, text string, ms int64) {
	if e, ok := m.entries[key]; ok {
		m.order.Remove(e)
	}
	m.entries[key] = m.order.PushBack(&memEntry{key: key, text: text, expires: time.Now().Add(time.Duration(ms) * time.Millisecond)})
	for m.order.Len() > m.max && m.max > 0 {
		oldest := m.order.Front()
		m.order.Remove(oldest)
		delete(m.entries, oldest.Value.(*memEntry).key)
	}
}

func (m *MemoryIdempotencyStore) Claim(_ context.Context, key, entry string, leaseMs int64) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if held, ok := m.live(key); ok {
		return held, nil
	}
	m.put(key, entry, leaseMs)
	return "", nil
}

func (m *MemoryIdempotencyStore) Complete(_ context.Context, key, entry string, ttlMs int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.put(key, entry, ttlMs)
	return nil
}

func (m *MemoryIdempotencyStore) Release(_ context.Context, key, entry string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if held, ok := m.live(key); ok && held == entry {
		m.order.Remove(m.entries[key])
		delete(m.entries, key)
	}
	return nil
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
