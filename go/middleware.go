package toolctx

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"time"
)

type contextKey struct{}

// FromContext is the verified context the middleware put in an accepted
// call's request context; ErrNoContext when there is none.
func FromContext(ctx context.Context) (*Context, error) {
	v, ok := ctx.Value(contextKey{}).(*verified)
	if !ok {
		return nil, ErrNoContext
	}
	return v.context()
}

// ContextJSON is the verified context as the core wrote it, or nil.
func ContextJSON(ctx context.Context) []byte {
	if v, ok := ctx.Value(contextKey{}).(*verified); ok {
		return v.raw
	}
	return nil
}

// Middleware verifies every request before next sees it:
//
//   - the headers first: a wrong credential is refused before the body is
//     read, and what the core passes on its headers alone (GET, DELETE,
//     ...) goes on unread;
//   - then the body, up to MaxBodyBytes (one byte more is refused
//     body_too_large without reading the rest);
//   - a refusal is written as the core rendered it (status, JSON-RPC body);
//   - otherwise next gets the request with the body replayed, every copy
//     of a forwarded header removed and an accepted call's upstream
//     headers set, and the verified context in its context.Context
//     (FromContext).
func Middleware(v *Verifier) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v.serve(w, r, next)
		})
	}
}

func (v *Verifier) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	started := time.Now()
	h := heads(r.Method, r.Header)
	in, err := v.pool.get()
	if err != nil {
		h.release()
		v.refuse(w, r, started, v.failed(), nil, false, err)
		return
	}
	out, err := in.call("toolctx_check_headers", [][]byte{h.lens, h.bytes})
	var ticket uint64
	var verdict Verdict
	readBody := err == nil && len(out) > 0 && out[0] == 'b'
	if readBody {
		ticket, err = strconv.ParseUint(string(out[1:]), 10, 32)
	} else if err == nil {
		verdict, err = v.read(out)
	} else {
		verdict = v.failed()
	}
	v.pool.put(in)
	if !readBody || err != nil {
		h.release()
		if err != nil {
			verdict = v.failed()
		}
		v.apply(w, r, next, started, verdict, nil, false, err)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, v.maxBody+1))
	if err != nil {
		// The body could not be read (broken framing, the client went
		// away): nothing goes on, and the answer is the core's for a
		// failure inside (internal_error), as toolctx-tower's.
		h.release()
		v.refuse(w, r, started, v.failed(), nil, true, err)
		return
	}
	over := int64(len(body)) > v.maxBody
	now := uint64(v.unix())
	// The core keeps the checked headers under the ticket on that instance.
	in.mu.Lock()
	if in.dead {
		in.mu.Unlock()
		in, err = v.pool.get()
		if err == nil {
			verdict, err = v.decide(r.Context(), in, "toolctx_verify", [][]byte{h.lens, h.bytes, body}, now)
			v.pool.put(in)
		} else {
			verdict = v.failed()
		}
	} else {
		out, err = in.call("toolctx_verify_body", [][]byte{body}, ticket, now)
		switch {
		case err != nil:
			verdict = v.failed()
		case len(out) == 1 && out[0] == 'u':
			verdict, err = v.decide(r.Context(), in, "toolctx_verify", [][]byte{h.lens, h.bytes, body}, now)
		case len(out) > 0 && out[0] == 'c':
			verdict, err = v.settle(r.Context(), in, out[1:])
		default:
			verdict, err = v.read(out)
		}
		dead := in.dead
		in.mu.Unlock()
		if dead {
			v.pool.drop()
		}
	}
	h.release()
	v.apply(w, r, next, started, verdict, body, over, err)
}

// apply carries out the verdict: the refusal written, or the request
// handed on with what the core decided goes upstream.
func (v *Verifier) apply(w http.ResponseWriter, r *http.Request, next http.Handler, started time.Time, verdict Verdict, body []byte, over bool, err error) {
	if verdict.Outcome == Reject {
		v.refuse(w, r, started, verdict, body, over, err)
		return
	}
	v.record(r, started, verdict, body, err)
	for _, name := range v.removed {
		r.Header.Del(name)
	}
	for _, kv := range verdict.Set {
		r.Header.Set(kv[0], kv[1])
	}
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	if verdict.accepted != nil {
		r = r.WithContext(context.WithValue(r.Context(), contextKey{}, verdict.accepted))
	}
	next.ServeHTTP(w, r)
}

func (v *Verifier) refuse(w http.ResponseWriter, r *http.Request, started time.Time, verdict Verdict, body []byte, over bool, err error) {
	v.record(r, started, verdict, body, err)
	ref := verdict.Refusal
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(ref.Body)))
	// The rest of an oversized body is not read: end the connection instead.
	if over {
		hdr.Set("Connection", "close")
	}
	w.WriteHeader(ref.Status)
	_, _ = io.WriteString(w, ref.Body)
}

// CarryContext is ctx with the verified context of from (a request
// context behind Middleware), for SDKs that run handlers on a context of
// their own (mcp-go's server.WithHTTPContextFunc: mcpgo.ContextFunc).
func CarryContext(ctx, from context.Context) context.Context {
	if v, ok := from.Value(contextKey{}).(*verified); ok {
		return context.WithValue(ctx, contextKey{}, v)
	}
	return ctx
}
