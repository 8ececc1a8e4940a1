#!/usr/bin/env python3
"""Hostile traffic through the npm front end: the Node middleware in the
example server, and the example Worker inside workerd; and through the
in-process front ends of the other example servers (--target rust: the
tower layer; --target go: the Go middleware in front of go-sdk;
--target java: ToolctxFilter in front of java-sdk).

    tests/hostile/npm.py --target node|workerd|rust|go|java [--count 10000] [--seed 1] [--workers 4]

The same seeded generator as tests/envoy/hostile.py (tests/hostile/traffic.py:
classes, mutations, tokens minted with Python's hmac, the core's reference
runner as the judge), every call naming the tool `toolctx_probe`.

--target node: two copies of examples/node-server/server.mjs (MCP SDK v2
behind `toolctx(verifier)`), one without and one with a static credential,
each started with `--record`, so that the server itself writes down every
request the middleware handed on (with the context it verified) and every
tool run. --target workerd: examples/cloudflare-worker bundled as wrangler
would and run by npm's workerd, proxying to a recording origin (the tool:
every tools/call reaching it is one run); the Worker has no static
credential, so the credential class is judged by the runner there ("any").

Checks: the server or workerd stays up and exits cleanly, with nothing
unhandled on its stderr; every JSON answer that is not the handler's is a
well-formed JSON-RPC refusal with a reason, status and code from the
contract's table; whatever the HTTP layer (Node's parser, workerd's) refuses
by itself is counted apart; every minted valid call is handed on with a
context and runs the tool once; nothing meant to be refused or abandoned is
handed on; tool runs equal the accepted calls (Node: less those the MCP SDK
itself answers with an error because their JSON-RPC id is absent or not a
string or number, each listed); the core's reference runner reaches the same
verdict for every request handed on and every refusal; no connection is left
open. Prints a summary and closes with `N passed, N failed`.
"""

import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "envoy"))
import harness  # noqa: E402
import traffic  # noqa: E402
from traffic import ACCEPTED, INSTANCE, SEQ_HEADER  # noqa: E402

ROOT = traffic.ROOT
TOOL = "toolctx_probe"

# What each target's HTTP layer answers by itself, before toolctx sees the
# request: Node's http parser (llhttp) writes a bare 400 for framing it
# cannot parse and 431 past its 16 KiB header limit; workerd (kj-http) its
# own 400 and 431 (413 allowed too, as for Envoy).
# hyper (under axum, in examples/rust-server) answers 400 itself for framing
# it cannot parse and 431 for a head over its limits.
# Go's net/http (examples/go-server) answers 400 itself for framing it
# cannot parse and 431 for a head over its 1 MB limit.
# Jetty 12 (under examples/java-server) answers 400 itself for framing it
# cannot parse and 431 for a head over the example's 64 KiB limit.
OWN = {"node": {400, 431}, "workerd": {400, 413, 431}, "rust": {400, 431}, "go": {400, 431}, "java": {400, 431}}
# Envoy's default limits (max_headers_count, max_request_headers_kb 60), which
# the generator's huge_headers class expects Envoy to enforce itself.
ENVOY_MAX_HEADERS = 100
ENVOY_MAX_HEADER_BYTES = 60 * 1024
# Node's default --max-http-header-size: a request head over it never reaches
# the middleware (431).
NODE_HEADER_LIMIT = 16 * 1024


def expectations(target, req, port):
    """The generator's expectations are Envoy's; what differs per target is
    written here, explicitly (measured on Node 20 and workerd 1.20261117.1)."""
    head, _ = req.wire(port)
    if target == "workerd" and req.listener == "cred":
        # The example Worker has no static credential: one endpoint, judged by the runner.
        req.listener = "main"
        req.expect = "any" if req.expect in ("accept", "refuse") else req.expect
    if target == "node" and len(head) > NODE_HEADER_LIMIT and req.expect == "accept":
        # Envoy hands a 50 KB x-pad to the filter; Node's parser answers 431 itself.
        req.expect = "own"
    if target in ("node", "go", "java") and len(req.headers) >= ENVOY_MAX_HEADERS and req.expect == "refuse":
        # Envoy's own header-count limit (431); Node (2000 headers), Go and
        # Jetty (no count limit) hand them on and the core judges.
        req.expect = "any"
    if target in ("workerd", "rust", "go", "java") and req.expect == "refuse" and any(
            n == "x-pad" and len(v) >= ENVOY_MAX_HEADER_BYTES for n, v in req.headers):
        # A 60 KiB header: over Envoy's limit (431), under workerd's,
        # hyper's (which reads heads up to about 400 KiB) and Go's (1 MB);
        # the core judges.
        req.expect = "any"


# ---------------------------------------------------------------- targets ----

def record_entries(records):
    """The example servers' --record files, as traffic.Target.handed and
    .runs read them: ({seq: [entry]}, unmarked, {seq: tool runs})."""
    handed, runs, unmarked = {}, collections.Counter(), 0
    for path in records:
        with open(path) as f:
            for line in f:
                e = json.loads(line)
                seq = next((v for k, v in e["headers"] if k.lower() == SEQ_HEADER), None)
                if seq is None:
                    unmarked += 1
                elif "handed_on" in e:
                    handed.setdefault(int(seq), []).append(
                        {"method": e["handed_on"], "headers": e["headers"], "context": e["context"]})
                else:
                    runs[int(seq)] += 1
    return handed, unmarked, runs


class Servers(traffic.Target):
    """Two copies of an example server (main; cred, with a static
    credential), each started with --record FILE --exit-with-stdin, each
    printing `listening http://127.0.0.1:PORT/mcp`."""

    def __init__(self, argv, keys, work, env=None):
        self.procs, self.ports, self.records, self.logs, self.codes = {}, {}, {}, {}, None
        for listener in ("main", "cred"):
            e = dict(os.environ, TOOLCTX_INSTANCE_ID=INSTANCE, TOOLCTX_SECRET=keys.secret, **(env or {}))
            if listener == "cred":
                e["TOOLCTX_CREDENTIAL"] = keys.credential
            self.records[listener] = os.path.join(work, "record-%s-%s.jsonl" % (self.name, listener))
            open(self.records[listener], "w").close()
            self.logs[listener] = open(os.path.join(work, "stderr-%s-%s.log" % (self.name, listener)), "w+")
            p = subprocess.Popen(argv + ["--record", self.records[listener], "--exit-with-stdin"],
                                 env=e, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.logs[listener],
                                 text=True)
            self.procs[listener] = p
            line = p.stdout.readline()
            if not line.startswith("listening http://127.0.0.1:"):
                self.stop()
                raise RuntimeError("example server did not start: %r\n%s" % (line, self.stderr_text(listener)))
            self.ports[listener] = int(line.split(":")[2].split("/")[0])
        self.pids = {k: p.pid for k, p in self.procs.items()}

    def handed(self):
        handed, unmarked, self._runs = record_entries(self.records.values())
        return handed, unmarked

    def runs(self):
        return self._runs

    def alive(self):
        return all(p.poll() is None for p in self.procs.values())

    def stop(self):
        if self.codes is None:
            self.codes = {}
            for k, p in self.procs.items():
                try:
                    p.stdin.close()
                    self.codes[k] = p.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    p.kill()
                    self.codes[k] = p.wait()
        return self.codes

    def stderr_text(self, listener):
        f = self.logs[listener]
        f.flush()
        f.seek(0)
        return f.read()

    def errors(self):
        return [l for k in self.logs for l in self.stderr_text(k).splitlines() if any(w in l for w in UNHANDLED)]


# Words of a crash or an unhandled error on a server's stderr.
UNHANDLED = ("Unhandled", "unhandled", "Uncaught", "uncaught", "FATAL", "Segmentation", "Traceback")


class NodeTarget(Servers):
    """examples/node-server/server.mjs (MCP SDK v2 behind `toolctx(verifier)`)."""

    name = "node"
    own = frozenset(OWN["node"])
    forward = {"tuix": True}

    def __init__(self, keys, work):
        server = os.path.join(ROOT, "examples", "node-server", "server.mjs")
        super().__init__(["node", server, "--tuix"], keys, work)

    def expect(self, req):
        expectations("node", req, self.ports[req.listener])


class RustTarget(Servers):
    """examples/rust-server (rmcp behind toolctx-tower's layer, stateless),
    recording what the layer handed on and every tool run like the Node
    example (the binary: TOOLCTX_RUST_SERVER, default
    target/debug/toolctx-example-rust-server)."""

    name = "rust"
    own = frozenset(OWN["rust"])

    def __init__(self, keys, work):
        binary = os.environ.get("TOOLCTX_RUST_SERVER") or os.path.join(
            ROOT, "target", "debug", "toolctx-example-rust-server")
        super().__init__([binary, "--stateless"], keys, work)

    def expect(self, req):
        expectations("rust", req, self.ports[req.listener])

    def adjust(self, req, status, body):
        if req.framing == "chunked-bad" and status == 500 and b'"reason":"internal_error"' in (body or b""):
            # hyper reports broken chunked framing as an error reading the
            # body, after the head was handed on; the layer then refuses as
            # the core does for anything failing inside (internal_error).
            req.outcome = "own"


class GoTarget(RustTarget):
    """examples/go-server (go-sdk behind the Go package's middleware,
    stateless, forwarding the Tuix headers), recording like the others (the
    binary: TOOLCTX_GO_SERVER, default target/go/go-server). A body that
    cannot be read (broken chunked framing) is refused internal_error, as
    toolctx-tower's layer does (`adjust`)."""

    name = "go"
    own = frozenset(OWN["go"])
    forward = {"tuix": True}

    def __init__(self, keys, work):
        binary = os.environ.get("TOOLCTX_GO_SERVER") or os.path.join(ROOT, "target", "go", "go-server")
        Servers.__init__(self, [binary, "--stateless", "--tuix"], keys, work)

    def expect(self, req):
        expectations("go", req, self.ports[req.listener])


class JavaTarget(Servers):
    """examples/java-server (java-sdk's stateless servlet transport on Jetty
    behind ToolctxFilter), recording what the filter handed on and every
    tool run like the Node example (built by build_java)."""

    name = "java"
    own = frozenset(OWN["java"])

    def __init__(self, keys, work):
        super().__init__([os.path.join(ROOT, "examples", "java-server", "run"), "--stateless"], keys, work)

    def expect(self, req):
        expectations("java", req, self.ports[req.listener])

    def adjust(self, req, status, body):
        if req.framing == "chunked-bad" and status == 400:
            # Jetty reports broken chunked framing while the filter reads the
            # body (before anything is handed on) with its own 400 error page.
            req.outcome = "own"


class WorkerdTarget(traffic.Target):
    """The example Worker in workerd, in front of a recording origin (the
    tool: every tools/call reaching it is one run)."""

    name = "workerd"
    own = frozenset(OWN["workerd"])
    forward = {"tuix": True}

    def __init__(self, keys, work):
        self.origin = harness.Recorder()
        env = dict(os.environ, TOOLCTX_INSTANCE_ID=INSTANCE, TOOLCTX_SECRET=keys.secret, TOOLCTX_TUIX="1")
        self.log = open(os.path.join(work, "stderr-workerd.log"), "w+")
        self.proc = subprocess.Popen(["node", os.path.join(HERE, "workerd-example.mjs"),
                                      "http://127.0.0.1:%d" % self.origin.port],
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        try:
            url = json.loads(line)["url"]
        except ValueError:
            raise RuntimeError("workerd did not start: %r" % line)
        port = int(url.rsplit(":", 1)[1])
        self.ports = {"main": port, "cred": port}
        self.code = None

    def expect(self, req):
        expectations("workerd", req, self.ports[req.listener])

    def upstream(self, status, body):
        return status == 200 and body == harness.Recorder.MARKER

    def handed(self):
        # The Worker forwards no context: a tools/call reaching the origin
        # is an accepted one (the core accepts nothing else).
        handed, unmarked = traffic.upstream_entries(
            self.origin, lambda _hdr, method, body: ACCEPTED if tools_call(method, body) else None)
        self._runs = collections.Counter({s: len(es) for s, es in handed.items() if es[0]["context"] is not None})
        return handed, unmarked

    def runs(self):
        return self._runs

    def view(self, headers):
        return fetch_view(headers)

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.code is None:
            try:
                self.proc.stdin.close()
                self.code = self.proc.wait(timeout=15)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.code = self.proc.wait()
            self.origin.close()
        return {"workerd-example": self.code}

    def errors(self):
        self.log.flush()
        self.log.seek(0)
        return [l for l in self.log.read().splitlines() if any(w in l for w in UNHANDLED)]

    def summary(self, sent):
        return []


def fetch_view(headers):
    """The headers as a Worker can see them: the Fetch API joins repeated
    fields with ", ", so the package splits the token header back at commas
    (npm/src/boundary.ts; a compact JWS never holds one) and a comma inside
    one token line reads as two lines. Returns (headers, whether split)."""
    out, split = [], False
    for n, v in headers:
        if n.lower() == "x-agentarea-context" and "," in v:
            out.extend([n, part.strip(" \t")] for part in v.split(","))
            split = True
        else:
            out.append([n, v])
    return out, split


def tools_call(method, body):
    """A POST whose body is one JSON-RPC object calling tools/call (the only
    request the core can accept; what reaches the origin is otherwise a pass)."""
    try:
        doc = json.loads(body)
    except ValueError:
        return False
    return method == "POST" and isinstance(doc, dict) and doc.get("method") == "tools/call"


def main():
    labels = {"node": "the Node middleware (examples/node-server)",
              "workerd": "the example Worker inside workerd",
              "rust": "toolctx-tower's layer in front of rmcp (examples/rust-server)",
              "go": "the Go middleware in front of go-sdk (examples/go-server)",
              "java": "ToolctxFilter in front of java-sdk on Jetty (examples/java-server)"}
    targets = {"node": NodeTarget, "workerd": WorkerdTarget, "rust": RustTarget, "go": GoTarget, "java": JavaTarget}

    def make(name, keys, work):
        return targets[name](keys, work), labels[name], TOOL

    return traffic.main(make, __doc__, targets=tuple(targets))


if __name__ == "__main__":
    sys.exit(main())
