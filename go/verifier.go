package toolctx

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Verifier is a validated configuration over a pool of the core's
// instances. Create one per configuration and share it: it is safe for
// concurrent use.
type Verifier struct {
	config  []byte
	flags   uint64
	pool    *pool
	guard   ReplayStore
	now     func() time.Time
	tel     *Telemetry
	maxBody int64
	removed []string
	// internal is the core's internal_error refusal, asked for once: the
	// answer when an instance traps or a store cannot be trusted.
	internal *Refusal
}

// ErrNoContext: no verified context (no toolctx middleware in front, or
// not an accepted call).
var ErrNoContext = errors.New("toolctx: no verified context: is the toolctx middleware mounted in front of this handler?")

// NewVerifier validates the options in the core (its configuration
// errors come back as *Error with the core's code) and readies the pool.
func NewVerifier(o Options) (*Verifier, error) {
	config, err := o.configJSON()
	if err != nil {
		return nil, err
	}
	v := &Verifier{config: config, guard: o.ReplayGuard, now: o.Now, tel: o.Telemetry}
	// As given; not given, the core's default.
	if o.IncludeReason != nil {
		if err := v.flag("include_reason_given"); err != nil {
			return nil, err
		}
		if *o.IncludeReason {
			if err := v.flag("include_reason"); err != nil {
				return nil, err
			}
		}
	}
	if v.guard != nil {
		// Every claim goes to the guard (a store, or the one instance
		// holding the in-memory guard): the pool's instances share it.
		if err := v.flag("shared_store"); err != nil {
			return nil, err
		}
	}
	if v.now == nil {
		v.now = time.Now
	}
	first, err := v.newInstance()
	if err != nil {
		return nil, err
	}
	v.pool = newPool(v.newInstance)
	v.pool.made = 1
	first.mu.Lock()
	v.pool.put(first)
	return v, nil
}

// configureFlags are toolctx_configure's flag bits by name, as the module
// answers them (toolctx_configure_flags: crates/wasm-abi writes them once).
var configureFlags = sync.OnceValues(func() (map[string]uint64, error) {
	return withCore(func(in *instance) (map[string]uint64, error) {
		items, err := in.listOf("toolctx_configure_flags", nil)
		if err != nil {
			return nil, err
		}
		if len(items)%2 != 0 {
			return nil, &Error{Code: "internal", Message: "the core's configure flags are not name and bit pairs"}
		}
		flags := make(map[string]uint64, len(items)/2)
		for i := 0; i+1 < len(items); i += 2 {
			bit, err := strconv.ParseUint(items[i+1], 10, 32)
			if err != nil {
				return nil, &Error{Code: "internal", Message: "the core's configure flag " + items[i] + " is not a number"}
			}
			flags[items[i]] = bit
		}
		return flags, nil
	})
})

// flag sets the configure flag name (its bit the module's).
func (v *Verifier) flag(name string) error {
	flags, err := configureFlags()
	if err != nil {
		return err
	}
	bit, ok := flags[name]
	if !ok {
		return &Error{Code: "internal", Message: "the core has no configure flag " + name}
	}
	v.flags |= bit
	return nil
}

// newInstance instantiates the verifier module and configures it; the
// first one also reads the limits and the core's internal refusal.
func (v *Verifier) newInstance() (*instance, error) {
	in, err := newInstance(verifierWasm, &shared().verifier)
	if err != nil {
		return nil, err
	}
	items, err := in.listOf("toolctx_configure", [][]byte{v.config}, v.flags, 0)
	if err != nil {
		in.close()
		return nil, err
	}
	if v.internal == nil {
		if len(items) < 2 {
			in.close()
			return nil, errors.New("toolctx: the core answered no limits")
		}
		v.maxBody, err = strconv.ParseInt(items[0], 10, 64)
		if err != nil {
			in.close()
			return nil, errors.New("toolctx: the core's max body bytes is not a number")
		}
		// items[1] is max_token_bytes, for a host's request-head limit.
		v.removed = items[2:]
		out, err := in.call("toolctx_refusal", [][]byte{[]byte("internal_error")})
		if err == nil && (len(out) == 0 || out[0] != 'r') {
			err = errors.New("toolctx: the core's internal refusal is not one")
		}
		if err == nil {
			v.internal, err = readRefusal(out[1:])
		}
		if err != nil {
			in.close()
			return nil, err
		}
	}
	return in, nil
}

// MaxBodyBytes is how many body bytes are read at most; one more is
// enough to refuse body_too_large.
func (v *Verifier) MaxBodyBytes() int64 { return v.maxBody }

// RemovedHeaders are the lower-case header names removed from every
// request that passes or is accepted (the configuration's forward).
func (v *Verifier) RemovedHeaders() []string { return v.removed }

// String is the configuration with secrets redacted, as the core describes it.
func (v *Verifier) String() string {
	in, err := v.pool.get()
	if err != nil {
		return "toolctx.Verifier"
	}
	defer v.pool.put(in)
	s, err := in.text("toolctx_describe", nil)
	if err != nil {
		return "toolctx.Verifier"
	}
	return s
}

func (v *Verifier) unix() int64 { return v.now().Unix() }

// Verify is the whole decision on one request (CONTRACT §2, steps 0 to
// 14, and the replay guard when there is one). An error is the core's or
// the guard's failure; the verdict is then the core's internal_error
// refusal (fail closed).
func (v *Verifier) Verify(ctx context.Context, method string, header http.Header, body []byte) (Verdict, error) {
	h := heads(method, header)
	defer h.release()
	in, err := v.pool.get()
	if err != nil {
		return v.failed(), err
	}
	verdict, err := v.decide(ctx, in, "toolctx_verify", [][]byte{h.lens, h.bytes, body}, uint64(v.unix()))
	v.pool.put(in)
	return verdict, err
}

// decide runs a body operation on in (locked) and reads its answer,
// settling a replay claim with the guard.
func (v *Verifier) decide(ctx context.Context, in *instance, op string, fields [][]byte, params ...uint64) (Verdict, error) {
	out, err := in.call(op, fields, params...)
	if err != nil {
		return v.failed(), err
	}
	if len(out) > 0 && out[0] == 'c' {
		return v.settle(ctx, in, out[1:])
	}
	return v.read(out)
}

// read turns a `p`, `a` or `r` answer into a verdict.
func (v *Verifier) read(out []byte) (Verdict, error) {
	if len(out) == 0 {
		return v.failed(), errors.New("toolctx: empty verdict from the core")
	}
	switch out[0] {
	case 'p':
		return Verdict{Outcome: Pass}, nil
	case 'a':
		acc, set := accepted(out[1:])
		return Verdict{Outcome: Accept, accepted: acc, Set: set}, nil
	case 'r':
		r, err := readRefusal(out[1:])
		if err != nil {
			return v.failed(), err
		}
		return Verdict{Outcome: Reject, Refusal: r}, nil
	}
	return v.failed(), errors.New("toolctx: unexpected verdict from the core")
}

// settle asks the guard about the core's claim, then hands the answer back
// to the core on the same instance (it holds the claim's ticket). The
// instance is unlocked while the guard answers.
func (v *Verifier) settle(ctx context.Context, in *instance, out []byte) (Verdict, error) {
	ticket, until, jti, err := claim(out)
	if err != nil {
		return v.failed(), err
	}
	in.mu.Unlock()
	answer, gerr := v.guard.FirstUse(ctx, jti, until, v.unix())
	in.mu.Lock()
	if gerr != nil {
		// A store that failed has answered `failed`: the core says what it means.
		answer = "failed"
	}
	if in.dead {
		return v.failed(), errTrap
	}
	out, err = in.call("toolctx_settle", [][]byte{[]byte(answer)}, uint64(ticket))
	if err != nil {
		return v.failed(), err
	}
	verdict, err := v.read(out)
	if err == nil && gerr != nil {
		err = gerr
	}
	return verdict, err
}

// failed is the verdict when the core cannot be asked: its internal_error
// refusal.
func (v *Verifier) failed() Verdict {
	return Verdict{Outcome: Reject, Refusal: v.internal}
}

// Close releases the verifier's idle instances; a verifier is not used
// after Close.
func (v *Verifier) Close() {
	for {
		select {
		case in := <-v.pool.free:
			in.mu.Lock()
			in.close()
			in.mu.Unlock()
		default:
			return
		}
	}
}
