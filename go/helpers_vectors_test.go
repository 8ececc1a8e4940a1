package toolctx

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// notInGo are the helper vector kinds this runner does not run: counted
// and named, never silently (none today).
var notInGo = map[string]bool{}

type helperCase struct {
	Name   string                     `json:"name"`
	Kind   string                     `json:"kind"`
	Input  map[string]json.RawMessage `json:"input"`
	Expect map[string]json.RawMessage `json:"expect"`
}

// TestHelperVectors runs tests/vectors/helpers.json's kinds that Go has
// (progress, result limits, the replay guard's Redis claim and reply) on
// the core's helper and verifier modules.
func TestHelperVectors(t *testing.T) {
	var file struct {
		Cases []helperCase `json:"cases"`
	}
	readVectors(t, "helpers.json", "toolctx-helpers", &file)
	ran, left := 0, map[string]int{}
	for _, c := range file.Cases {
		if notInGo[c.Kind] {
			left[c.Kind]++
			continue
		}
		run, ok := helperKinds[c.Kind]
		if !ok {
			t.Errorf("%s: kind %s unknown to this runner", c.Name, c.Kind)
			continue
		}
		ran++
		got, err := run(c.Input)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		for key, want := range c.Expect {
			if key == "reason" && c.Kind == "replay.redis_reply" {
				continue // the verifier's refusal for the answer, judged by the verdict tests
			}
			if c.Kind == "progress" && key == "answers" {
				continue // judged on what was sent, as npm's runner does
			}
			if !jsonSame(want, got[key]) {
				t.Errorf("%s: %s = %s, got %s", c.Name, key, want, got[key])
			}
		}
	}
	kinds := make([]string, 0, len(left))
	for k := range left {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, left[k]))
	}
	sort.Strings(kinds)
	if len(kinds) > 0 {
		t.Errorf("%d helper cases run; not run by this runner: %s", ran, strings.Join(kinds, ", "))
	}
	t.Logf("%d helper cases run", ran)
	if ran == 0 {
		t.Fatal("no helper case ran")
	}
}

func jsonSame(a json.RawMessage, b any) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil {
		return false
	}
	bb, err := json.Marshal(b)
	if err != nil || json.Unmarshal(bb, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

var helperKinds = map[string]func(map[string]json.RawMessage) (map[string]any, error){
	"replay.redis_claim": func(in map[string]json.RawMessage) (map[string]any, error) {
		var i struct {
			Prefix     string
			Jti        string
			Until, Now int64
		}
		if err := remarshal(in, &i); err != nil {
			return nil, err
		}
		args, err := RedisClaimArgs(i.Prefix, i.Jti, i.Until, i.Now)
		return map[string]any{"args": args}, err
	},
	"replay.redis_reply": func(in map[string]json.RawMessage) (map[string]any, error) {
		var r struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(in["reply"], &r); err != nil {
			return nil, err
		}
		value := []byte(nil)
		var s string
		if json.Unmarshal(r.Value, &s) == nil {
			value = []byte(s)
		} else if len(r.Value) > 0 {
			value = r.Value // an integer's decimal text
		}
		answer, err := RedisClaimAnswer(r.Type, value)
		return map[string]any{"answer": answer}, err
	},
	"result_limits": func(in map[string]json.RawMessage) (map[string]any, error) {
		var parts [][2]json.RawMessage
		if err := json.Unmarshal(in["result_json_parts"], &parts); err != nil {
			return nil, err
		}
		var text bytes.Buffer
		for _, p := range parts {
			var piece string
			var times int
			if json.Unmarshal(p[0], &piece) != nil || json.Unmarshal(p[1], &times) != nil {
				return nil, errors.New("bad result_json_parts")
			}
			text.WriteString(strings.Repeat(piece, times))
		}
		if !json.Valid(text.Bytes()) {
			// A text no JSON reader takes never reaches the helper.
			return map[string]any{"error": "result_not_json"}, nil
		}
		findings, err := CheckResult(text.Bytes())
		var e *Error
		if errors.As(err, &e) {
			return map[string]any{"error": e.Code}, nil
		}
		return map[string]any{"findings": findings}, err
	},
	"progress": runProgress,
	"idempotency.store_key": func(in map[string]json.RawMessage) (map[string]any, error) {
		var i struct{ Prefix, Namespace, Key string }
		if err := remarshal(in, &i); err != nil {
			return nil, err
		}
		storeKey, redisKey, err := idemKeys(i.Prefix, i.Namespace, i.Key)
		return map[string]any{"store_key": storeKey, "redis_key": redisKey}, err
	},
	"idempotency.entry": func(in map[string]json.RawMessage) (map[string]any, error) {
		var i struct {
			State, Hash, Owner string
			ResultJSON         string `json:"result_json"`
		}
		if err := remarshal(in, &i); err != nil {
			return nil, err
		}
		var text string
		var err error
		if i.State == "running" {
			text, err = helperText("toolctx_idem_running", []byte(i.Hash), []byte(i.Owner))
		} else {
			text, err = helperText("toolctx_idem_done", []byte(i.Hash), []byte(i.ResultJSON))
		}
		return coreAnswer(map[string]any{"text": text}, err)
	},
	"idempotency.held": func(in map[string]json.RawMessage) (map[string]any, error) {
		var i struct {
			Held     *string
			HeldHex  string `json:"held_hex"`
			Hash     string
			Revision *string
		}
		if err := remarshal(in, &i); err != nil {
			return nil, err
		}
		raw := []byte(nil)
		if i.Held != nil {
			raw = []byte(*i.Held)
		} else if b, err := hex.DecodeString(i.HeldHex); err == nil {
			raw = b
		}
		if i.Revision == nil {
			return nil, fmt.Errorf("held: no revision")
		}
		answer, err := helperText("toolctx_idem_held", raw, []byte(i.Hash), []byte(*i.Revision))
		if err != nil {
			return coreAnswer(nil, err)
		}
		switch {
		case answer == "c":
			return map[string]any{"answer": "conflict"}, nil
		case answer == "w":
			return map[string]any{"answer": "in_flight"}, nil
		case strings.HasPrefix(answer, "r"):
			return map[string]any{"answer": "replay", "replayed": answer[1:]}, nil
		}
		return nil, fmt.Errorf("held: unexpected answer %q", answer)
	},
	"idempotency.wait": func(in map[string]json.RawMessage) (map[string]any, error) {
		var i struct {
			NowMs      int64 `json:"now_ms"`
			DeadlineMs int64 `json:"deadline_ms"`
			Round      int   `json:"round"`
		}
		if err := remarshal(in, &i); err != nil {
			return nil, err
		}
		pause, err := withHelpers(func(in *instance) (int64, error) {
			return in.number("toolctx_idem_wait", uint64(i.NowMs), uint64(i.DeadlineMs), uint64(i.Round))
		})
		if pause < 0 {
			return map[string]any{"answer": "in_progress"}, err
		}
		return map[string]any{"sleep_ms": pause}, err
	},
	"idempotency.refusal": func(in map[string]json.RawMessage) (map[string]any, error) {
		var i struct{ Outcome, Key string }
		if err := remarshal(in, &i); err != nil {
			return nil, err
		}
		text, err := helperText("toolctx_idem_refusal", []byte(i.Outcome), []byte(i.Key))
		return map[string]any{"result_json": text}, err
	},
	"idempotency.argument_hash": func(in map[string]json.RawMessage) (map[string]any, error) {
		var i struct {
			ArgumentsJSON string `json:"arguments_json"`
		}
		if err := remarshal(in, &i); err != nil {
			return nil, err
		}
		canonical, err := helperText("toolctx_canonical_json", []byte(i.ArgumentsJSON))
		if err != nil {
			return map[string]any{"error": true}, nil
		}
		hash, err := helperText("toolctx_idem_argument_hash", []byte(i.ArgumentsJSON))
		if err != nil {
			return map[string]any{"error": true}, nil
		}
		return map[string]any{"canonical": canonical, "hash": hash}, nil
	},
	"idempotency.redis_commands": func(in map[string]json.RawMessage) (map[string]any, error) {
		var i struct {
			Prefix, Namespace, Key, Hash, Owner string
			ResultJSON                          string `json:"result_json"`
			LeaseMs                             int64  `json:"lease_ms"`
			TTLMs                               int64  `json:"ttl_ms"`
		}
		if err := remarshal(in, &i); err != nil {
			return nil, err
		}
		_, key, err := idemKeys(i.Prefix, i.Namespace, i.Key)
		if err != nil {
			return nil, err
		}
		running, err := helperText("toolctx_idem_running", []byte(i.Hash), []byte(i.Owner))
		if err != nil {
			return nil, err
		}
		done, err := helperText("toolctx_idem_done", []byte(i.Hash), []byte(i.ResultJSON))
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		for _, c := range []struct {
			command, entry string
			ms             int64
		}{{"claim", running, i.LeaseMs}, {"read", "", 0}, {"complete", done, i.TTLMs}, {"release", running, 0}} {
			args, err := IdempotencyRedisArgs(c.command, key, c.entry, c.ms)
			if err != nil {
				return nil, err
			}
			out[c.command] = args
		}
		return out, nil
	},
	"idempotency.defaults": func(map[string]json.RawMessage) (map[string]any, error) {
		text, err := helperText("toolctx_idem_defaults")
		if err != nil {
			return nil, err
		}
		var d map[string]any
		if err := json.Unmarshal([]byte(text), &d); err != nil {
			return nil, err
		}
		pause := func(round uint64) (int64, error) {
			return withHelpers(func(in *instance) (int64, error) {
				return in.number("toolctx_idem_wait", 0, 1e9, round)
			})
		}
		first, err := pause(0)
		if err != nil {
			return nil, err
		}
		most, err := pause(60)
		if err != nil {
			return nil, err
		}
		return map[string]any{
			"ttl_ms": d["ttlMs"], "lease_ms": d["leaseMs"], "wait_ms": d["waitMs"],
			"memory_entries": d["memoryEntries"], "store_timeout_ms": d["storeTimeoutMs"],
			"claim_rounds": d["claimRounds"], "first_pause_ms": first, "max_pause_ms": most,
			"key_prefix": d["keyPrefix"], "release_script": d["releaseScript"],
			"replayed_key": d["replayed"], "outcome_key": d["outcomeKey"],
		}, nil
	},
	"idempotency.redis_reply": func(in map[string]json.RawMessage) (map[string]any, error) {
		var i struct {
			Command string
			Reply   struct {
				Type     string          `json:"type"`
				Value    json.RawMessage `json:"value"`
				ValueHex string          `json:"value_hex"`
			}
		}
		if err := remarshal(in, &i); err != nil {
			return nil, err
		}
		value := []byte(nil)
		var s string
		switch {
		case i.Reply.ValueHex != "":
			value, _ = hex.DecodeString(i.Reply.ValueHex)
		case json.Unmarshal(i.Reply.Value, &s) == nil:
			value = []byte(s)
		case len(i.Reply.Value) > 0:
			value = i.Reply.Value
		}
		means, err := IdempotencyRedisMeaning(i.Command, i.Reply.Type, value)
		out := map[string]any{"meaning": means}
		if means == "held" {
			out["held"] = string(value)
			out["held_hex"] = hex.EncodeToString(value)
		}
		return out, err
	},
}

// coreAnswer is out, or the core's error code as {"error": code}.
func coreAnswer(out map[string]any, err error) (map[string]any, error) {
	var e *Error
	if errors.As(err, &e) {
		return map[string]any{"error": e.Code}, nil
	}
	return out, err
}

// readVectors decodes tests/vectors/NAME into file, refusing a file whose
// "format" is not FORMAT (each runner reads only its own format).
func readVectors(t *testing.T, name, format string, file any) {
	t.Helper()
	raw, err := os.ReadFile("../tests/vectors/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(raw, &head); err != nil || head.Format != format {
		t.Fatalf("%s: %v %q", name, err, head.Format)
	}
	if err := json.Unmarshal(raw, file); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// idemKeys is the idempotency store key of NAMESPACE and KEY, and its
// Redis key under PREFIX, both the core's.
func idemKeys(prefix, namespace, key string) (string, string, error) {
	storeKey, err := helperText("toolctx_idem_store_key", []byte(namespace), []byte(key))
	if err != nil {
		return "", "", err
	}
	redisKey, err := IdempotencyRedisKey(prefix, storeKey)
	return storeKey, redisKey, err
}

func remarshal(in map[string]json.RawMessage, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// runProgress drives a coalescer as a reporter does, on a clock whose
// timers fire only when an event's time passes theirs (a timer before an
// event at the same time), and answers what was sent when.
func runProgress(in map[string]json.RawMessage) (map[string]any, error) {
	var i struct {
		IntervalMs int64 `json:"interval_ms"`
		Events     []struct {
			At     int64               `json:"at"`
			Report *[3]json.RawMessage `json:"report"`
			Flush  bool                `json:"flush"`
			Close  bool                `json:"close"`
		} `json:"events"`
	}
	if err := remarshal(in, &i); err != nil {
		return nil, err
	}
	// The vector's interval is the user's setting: read by the table.
	c, err := NewCoalescer(i.IntervalMs)
	if err != nil {
		return nil, err
	}
	defer c.Free()
	sent := []map[string]any{}
	timer := int64(-1)
	now := int64(0)
	apply := func(s Step) {
		if s.Send != nil {
			timer = -1
			var r map[string]any
			_ = json.Unmarshal(s.Send, &r)
			sent = append(sent, map[string]any{"at": now, "progress": r["progress"], "total": r["total"], "message": r["message"]})
		} else if s.Arm {
			timer = s.At
		}
	}
	advance := func(to int64) error {
		for timer >= 0 && timer <= to {
			now, timer = timer, -1
			s, err := c.Tick(now)
			if err != nil {
				return err
			}
			apply(s)
		}
		now = to
		return nil
	}
	for _, ev := range i.Events {
		if err := advance(ev.At); err != nil {
			return nil, err
		}
		switch {
		case ev.Report != nil:
			var p float64
			total, msg := math.NaN(), (*string)(nil)
			_ = json.Unmarshal(ev.Report[0], &p)
			var t *float64
			if json.Unmarshal(ev.Report[1], &t) == nil && t != nil {
				total = *t
			}
			_ = json.Unmarshal(ev.Report[2], &msg)
			s, err := c.Report(now, p, total, msg)
			if err != nil {
				return nil, err
			}
			apply(s)
		case ev.Flush:
			s, err := c.Flush(now)
			if err != nil {
				return nil, err
			}
			apply(s)
		default:
			c.Close()
			timer = -1
		}
	}
	if err := advance(math.MaxInt64 / 2); err != nil {
		return nil, err
	}
	return map[string]any{"sent": sent}, nil
}
