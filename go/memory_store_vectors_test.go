package toolctx

import (
	"context"
	"encoding/json"
	"testing"
)

// TestMemoryStoreVectors runs tests/vectors/memory-store.json through
// MemoryIdempotencyStore on a clock the case sets: the capacity as the
// user gave it (absent: nil), then each operation at its now.
func TestMemoryStoreVectors(t *testing.T) {
	var file struct {
		Cases []struct {
			Name           string          `json:"name"`
			Capacity       json.RawMessage `json:"capacity"`
			ExpectCapacity int             `json:"expect_capacity"`
			Ops            []struct {
				Op, Key, Entry string
				Ms, Now        int64
				Expect         json.RawMessage
			} `json:"ops"`
		} `json:"cases"`
	}
	readVectors(t, "memory-store.json", "toolctx-memory-store", &file)
	passed, failed := 0, 0
	for _, c := range file.Cases {
		var raw any
		if c.Capacity != nil {
			if err := json.Unmarshal(c.Capacity, &raw); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
		}
		var now int64
		m, err := newMemoryStore(raw, func() int64 { return now })
		if err != nil || m.capacity != c.ExpectCapacity {
			failed++
			t.Errorf("%s: capacity %v %v, expected %d", c.Name, m, err, c.ExpectCapacity)
			continue
		}
		ok := true
		for i, op := range c.Ops {
			now = op.Now
			got, err := memoryOp(m, op.Op, op.Key, op.Entry, op.Ms)
			var want any
			_ = json.Unmarshal(op.Expect, &want)
			if op.Op == "complete" {
				want = nil
			}
			if err != nil || !sameJSON(got, want) {
				ok = false
				t.Errorf("%s: op %d (%s): expected %s, got %v %v", c.Name, i, op.Op, op.Expect, got, err)
				break
			}
		}
		if ok {
			passed++
		} else {
			failed++
		}
	}
	t.Logf("%d passed, %d failed", passed, failed)
	if passed == 0 {
		t.Fatal("no memory store case ran")
	}
}

// memoryOp is one vector operation on the store: a claim and a complete
// through its IdempotencyStore methods, a read, a release's answer and
// the count through the core's exports it calls, under its lock.
func memoryOp(m *MemoryIdempotencyStore, op, key, entry string, ms int64) (any, error) {
	ctx := context.Background()
	switch op {
	case "claim":
		held, err := m.Claim(ctx, key, entry, ms)
		if held == "" {
			return nil, err
		}
		return held, err
	case "complete":
		return nil, m.Complete(ctx, key, entry, ms)
	case "read":
		out, err := m.ask("toolctx_idem_memory_read", []string{key})
		if out == "n" || err != nil {
			return nil, err
		}
		return out[1:], nil
	case "release":
		out, err := m.ask("toolctx_idem_memory_release", []string{key, entry})
		return out == "r", err
	case "len":
		m.mu.Lock()
		defer m.mu.Unlock()
		n, err := m.in.number("toolctx_idem_memory_len")
		return float64(n), err
	}
	return nil, &Error{Code: "internal", Message: "unknown operation " + op}
}

func sameJSON(got, want any) bool {
	a, err1 := json.Marshal(got)
	b, err2 := json.Marshal(want)
	return err1 == nil && err2 == nil && string(a) == string(b)
}
