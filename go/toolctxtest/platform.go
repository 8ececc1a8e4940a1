package toolctxtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// Header is the request header that carries the context token.
const Header = "X-AgentArea-Context"

// Platform is an http.RoundTripper for an MCP client's transport that
// acts as the platform: it adds the token set last (and any extra
// headers) to each tools/call request, and nothing to the other requests
// (initialize, notifications, GETs). Safe for concurrent use.
type Platform struct {
	// Next sends the requests; nil means http.DefaultTransport.
	Next http.RoundTripper

	mu     sync.Mutex
	token  string
	header http.Header
}

// SetToken sets the token for the next tools/calls; "" sends none.
func (p *Platform) SetToken(token string) {
	p.mu.Lock()
	p.token = token
	p.mu.Unlock()
}

// SetHeader sets extra headers for the next tools/calls (nil: none), as
// a client, or an attacker, could add beside the token.
func (p *Platform) SetHeader(h http.Header) {
	p.mu.Lock()
	p.header = h.Clone()
	p.mu.Unlock()
}

// RoundTrip reads the body to see whether it holds a tools/call (alone or
// in a batch), and sends a copy of the request, with the headers added if
// it does.
func (p *Platform) RoundTrip(r *http.Request) (*http.Response, error) {
	next := p.Next
	if next == nil {
		next = http.DefaultTransport
	}
	if r.Method != http.MethodPost || r.Body == nil {
		return next.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	out := r.Clone(r.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	if isToolCall(body) {
		p.mu.Lock()
		if p.token != "" {
			out.Header.Set(Header, p.token)
		}
		for k, v := range p.header {
			out.Header[k] = v
		}
		p.mu.Unlock()
	}
	return next.RoundTrip(out)
}

// isToolCall: the JSON-RPC message, or one of a batch, is a tools/call.
func isToolCall(body []byte) bool {
	var msgs []struct{ Method string }
	if json.Unmarshal(body, &msgs) != nil {
		msgs = msgs[:0]
		var one struct{ Method string }
		if json.Unmarshal(body, &one) != nil {
			return false
		}
		msgs = append(msgs, one)
	}
	for _, m := range msgs {
		if m.Method == "tools/call" {
			return true
		}
	}
	return false
}
