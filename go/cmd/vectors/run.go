package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	toolctx "github.com/toolctx/toolctx/go"
)

type tally struct {
	passed, failed, forward int
	failures                []string
	next                    int
}

// optionNames are the vector config names (CONTRACT §1) the verifier
// takes; others are ignored, as the Rust and npm runners do.
var optionNames = map[string]bool{
	"instance_id": true, "secrets": true, "credential": true, "require_context": true,
	"clock_skew_s": true, "max_token_age_s": true, "max_body_bytes": true,
	"max_token_bytes": true, "protocol_majors": true, "forward": true,
}

func runFile(srv *server, path string, t *tally) {
	fail := func(what string) {
		t.failed++
		t.failures = append(t.failures, path+": "+what)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		fail(err.Error())
		return
	}
	doc, err := readJSON(raw)
	file, _ := doc.(map[string]any)
	cases, _ := file["cases"].([]any)
	if err != nil || file == nil || cases == nil {
		fail("no cases")
		return
	}
	if format, ok := file["format"]; ok {
		// Another format (helpers, settings, memory store, store address),
		// with its own runner: a note, not a failure.
		fmt.Printf("skipped: %s: \"format\": %q is not verdict vectors\n", path, format)
		return
	}
	for i, c := range cases {
		cs, _ := c.(map[string]any)
		name, ok := cs["name"].(string)
		if !ok {
			name = fmt.Sprintf("#%d", i)
		}
		failure := runCase(srv, file, cs, t)
		if failure == "" {
			t.passed++
		} else {
			t.failed++
			t.failures = append(t.failures, fmt.Sprintf("%s: %s: %s", path, name, failure))
		}
	}
}

func isTableCase(c map[string]any) bool {
	s := func(k string) bool { _, ok := c[k].(string); return ok }
	return s("expected") && ((s("instance") && s("tool")) || (s("session_id") && s("turn") && s("tool")))
}

func runCase(srv *server, file, c map[string]any, t *tally) (failure string) {
	defer func() {
		if r := recover(); r != nil {
			failure = fmt.Sprint("panic: ", r)
		}
	}()
	if c == nil {
		return "not an object"
	}
	if isTableCase(c) || file["profile"] == "aivax" {
		return "this runner has no conventions to run this case"
	}
	expect, _ := c["expect"].(map[string]any)
	config := map[string]any{}
	for _, src := range []any{file["config"], c["config"]} {
		if m, ok := src.(map[string]any); ok {
			for k, v := range m {
				if optionNames[k] {
					config[k] = v
				}
			}
		}
	}
	now := int64(0)
	for _, n := range []any{c["now"], file["now"]} {
		if num, ok := n.(json.Number); ok {
			if x, err := num.Int64(); err == nil {
				now = x
				break
			}
		}
	}
	configJSON, err := json.Marshal(config)
	if err != nil {
		return "config: " + err.Error()
	}
	v, err := toolctx.NewVerifier(toolctx.Options{Config: configJSON, Now: func() time.Time { return time.Unix(now, 0) }})
	if err != nil {
		return "config: " + err.Error()
	}
	defer v.Close()
	req, err := request(c)
	if err != nil {
		return err.Error()
	}
	n := t.next
	t.next++
	route := srv.route(n, v)
	defer srv.unroute(n)
	status, body, err := send(srv.caseURL(n), req)
	if err != nil {
		return err.Error()
	}
	if failure := judge(expect, route.seen, status, body); failure != "" {
		return failure
	}
	if want, ok := expect["forward"]; ok {
		t.forward++
		return judgeForward(want, route.seen)
	}
	return ""
}

type vectorRequest struct {
	method  string
	headers [][2]string
	body    []byte
}

func request(c map[string]any) (vectorRequest, error) {
	r, ok := c["request"].(map[string]any)
	if !ok {
		return vectorRequest{}, errors.New("no request")
	}
	out := vectorRequest{method: "POST"}
	if m, ok := r["method"].(string); ok {
		out.method = m
	}
	hs, _ := r["headers"].([]any)
	for _, p := range hs {
		pair, _ := p.([]any)
		if len(pair) != 2 {
			return out, fmt.Errorf("bad header pair %s", show(p))
		}
		n, ok1 := pair[0].(string)
		v, ok2 := pair[1].(string)
		if !ok1 || !ok2 {
			return out, fmt.Errorf("bad header pair %s", show(p))
		}
		out.headers = append(out.headers, [2]string{n, v})
	}
	if b, ok := r["body"].(string); ok {
		out.body = []byte(b)
	} else if b64, ok := r["body_b64"].(string); ok {
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return out, fmt.Errorf("body_b64: %v", err)
		}
		out.body = b
	}
	return out, nil
}

var client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableCompression: true}}

// send sends the case's request as written: its method, each header line
// in its order and letter case (Go's client adds Host, User-Agent and
// Content-Length), and its body.
func send(url string, r vectorRequest) (int, []byte, error) {
	req, err := http.NewRequest(r.method, url, bytes.NewReader(r.body))
	if err != nil {
		return 0, nil, err
	}
	for _, h := range r.headers {
		req.Header[h[0]] = append(req.Header[h[0]], h[1])
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res.StatusCode, body, err
}

func describe(s seen, status int, body []byte) string {
	if s.reached {
		if s.context != nil {
			return "accept " + string(s.context)
		}
		return "pass"
	}
	return fmt.Sprintf("refusal %d %s", status, body)
}

// judge checks what happened against `expect`: a pass or accept reached
// the server (an accept with its context), a reject did not and was
// answered with the core's refusal.
func judge(expect map[string]any, s seen, status int, body []byte) string {
	outcome, _ := expect["outcome"].(string)
	bad := func(what string) string { return "expected " + what + ", got " + describe(s, status, body) }
	switch {
	case outcome == "pass" && s.reached && s.context == nil:
		return ""
	case outcome == "accept" && s.reached && s.context != nil:
		got, err := readJSON(s.context)
		ctx, _ := got.(map[string]any)
		if err != nil || ctx == nil {
			return "context not a JSON object: " + string(s.context)
		}
		want, _ := expect["context"].(map[string]any)
		for k, v := range want {
			g, present := ctx[k]
			if (!present && v != nil) || !jsonEq(v, g) {
				return bad(fmt.Sprintf("context.%s = %s", k, show(v)))
			}
		}
		return ""
	case outcome == "reject" && !s.reached:
		doc, err := readJSON(body)
		b, _ := doc.(map[string]any)
		if err != nil || b == nil {
			return fmt.Sprintf("refusal body not JSON: %d %q", status, body)
		}
		e, _ := b["error"].(map[string]any)
		data, _ := e["data"].(map[string]any)
		if !jsonEq(expect["status"], json.Number(fmt.Sprint(status))) || !jsonEq(expect["code"], e["code"]) {
			return bad(fmt.Sprintf("reject %s %s", show(expect["status"]), show(expect["code"])))
		}
		if reason, ok := expect["reason"].(string); ok && reason != data["reason"] {
			return bad("reason " + reason)
		}
		if id, ok := expect["id"]; ok && !jsonEq(id, b["id"]) {
			return bad("id " + show(id))
		}
		if b["jsonrpc"] != "2.0" {
			return "refusal body is not JSON-RPC 2.0: " + string(body)
		}
		return ""
	}
	return bad(outcome)
}

// judgeForward checks the headers that reached the server: a string must
// arrive exactly once with exactly that value, null not at all (in any
// letter case).
func judgeForward(want any, s seen) string {
	w, ok := want.(map[string]any)
	if !ok {
		return "expect.forward is not an object"
	}
	for name, value := range w {
		var got []string
		for n, vs := range s.header {
			if strings.EqualFold(n, name) {
				got = append(got, vs...)
			}
		}
		switch value := value.(type) {
		case nil:
			if len(got) > 0 {
				return fmt.Sprintf("r.Header: %s must not reach the server, got %q", name, got)
			}
		case string:
			if len(got) != 1 || got[0] != value {
				return fmt.Sprintf("r.Header: %s = %q, got %q", name, value, got)
			}
		default:
			return "expect.forward." + name + " is neither a string nor null"
		}
	}
	return ""
}
