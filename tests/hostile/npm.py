#!/usr/bin/env python3
"""Hostile traffic through the npm front end: the Node middleware in the
example server, and the example Worker inside workerd.

    tests/hostile/npm.py --target node|workerd [--count 10000] [--seed 1] [--workers 4]

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

import argparse
import base64
import collections
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "envoy"))
import harness  # noqa: E402
import traffic  # noqa: E402
from traffic import INSTANCE, SEQ_HEADER, Gen, Keys, check, core_judgement, results, vector_case  # noqa: E402

ROOT = traffic.ROOT
TOOL = "toolctx_probe"

# What each target's HTTP layer answers by itself, before toolctx sees the
# request: Node's http parser (llhttp) writes a bare 400 for framing it
# cannot parse and 431 past its 16 KiB header limit; workerd (kj-http) its
# own 400 and 431 (413 allowed too, as for Envoy).
# hyper (under axum, in examples/rust-server) answers 400 itself for framing
# it cannot parse and 431 for a head over its limits.
OWN = {"node": {400, 431}, "workerd": {400, 413, 431}, "rust": {400, 431}}
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
    if target == "node" and len(head) > NODE_HEADER_LIMIT and req.expect == "accept":
        # Envoy hands a 50 KB x-pad to the filter; Node's parser answers 431 itself.
        req.expect = "own"
    if target == "node" and len(req.headers) >= ENVOY_MAX_HEADERS and req.expect == "refuse":
        # Envoy's own header-count limit (431); Node (2000 headers) hands them on and the core judges.
        req.expect = "any"
    if target in ("workerd", "rust") and req.expect == "refuse" and any(
            n == "x-pad" and len(v) >= ENVOY_MAX_HEADER_BYTES for n, v in req.headers):
        # A 60 KiB header: over Envoy's limit (431), under workerd's and
        # hyper's (which reads heads up to about 400 KiB); the core judges.
        req.expect = "any"
    if target == "workerd" and req.listener == "cred":
        # The example Worker has no static credential: one endpoint, judged by the runner.
        req.listener = "main"
        req.expect = "any" if req.expect in ("accept", "refuse") else req.expect


# ---------------------------------------------------------------- targets ----

class NodeTarget:
    """Two example servers (main, cred), each recording what it handed on."""

    name = "node"

    def argv(self):
        return ["node", os.path.join(ROOT, "examples", "node-server", "server.mjs")]

    def __init__(self, keys, work):
        self.work, self.procs, self.ports, self.records, self.logs = work, {}, {}, {}, {}
        for listener in ("main", "cred"):
            env = dict(os.environ, TOOLCTX_INSTANCE_ID=INSTANCE, TOOLCTX_SECRET=keys.secret)
            if listener == "cred":
                env["TOOLCTX_CREDENTIAL"] = keys.credential
            self.records[listener] = os.path.join(work, "record-%s.jsonl" % listener)
            self.logs[listener] = open(os.path.join(work, "stderr-%s.log" % listener), "w+")
            p = subprocess.Popen([*self.argv(), "--record", self.records[listener], "--exit-with-stdin"],
                                 env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.logs[listener],
                                 text=True)
            self.procs[listener] = p
            line = p.stdout.readline()
            if not line.startswith("listening http://127.0.0.1:"):
                raise RuntimeError("example server did not start: %r" % line)
            self.ports[listener] = int(line.split(":")[2].split("/")[0])
        self.pids = {k: p.pid for k, p in self.procs.items()}

    def upstream(self, status, body):
        return False  # decided from the record after the run

    def ledger(self):
        """(handed on: seq -> [entries], runs: seq -> count, unmarked)."""
        handed, runs, unmarked = collections.defaultdict(list), collections.Counter(), 0
        for listener, path in self.records.items():
            with open(path) as f:
                for line in f:
                    e = json.loads(line)
                    seq = next((v for k, v in e["headers"] if k.lower() == SEQ_HEADER), None)
                    if seq is None:
                        unmarked += 1
                        continue
                    if "handed_on" in e:
                        handed[int(seq)].append(dict(e, listener=listener))
                    else:
                        runs[int(seq)] += 1
        return handed, runs, unmarked

    def alive(self):
        return all(p.poll() is None for p in self.procs.values())

    def stop(self):
        codes = {}
        for k, p in self.procs.items():
            try:
                p.stdin.close()
                codes[k] = p.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                p.kill()
                codes[k] = p.wait()
        return codes

    def stderr(self):
        out = {}
        for k, f in self.logs.items():
            f.flush()
            f.seek(0)
            out[k] = f.read()
        return out


class RustTarget(NodeTarget):
    """Two copies of examples/rust-server (rmcp behind toolctx-tower's
    layer), recording what the layer handed on and every tool run, like the
    Node example (the binary: TOOLCTX_RUST_SERVER, default
    target/debug/toolctx-example-rust-server)."""

    name = "rust"

    def argv(self):
        return [os.environ.get("TOOLCTX_RUST_SERVER")
                or os.path.join(ROOT, "target", "debug", "toolctx-example-rust-server"), "--stateless"]


class WorkerdTarget:
    """The example Worker in workerd, in front of a recording origin."""

    name = "workerd"

    def __init__(self, keys, work):
        self.origin = harness.Recorder()
        env = dict(os.environ, TOOLCTX_INSTANCE_ID=INSTANCE, TOOLCTX_SECRET=keys.secret)
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
        self.pids = {"workerd-example": self.proc.pid}

    def upstream(self, status, body):
        return status == 200 and body == harness.Recorder.MARKER

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        try:
            self.proc.stdin.close()
            code = self.proc.wait(timeout=15)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            code = self.proc.wait()
        self.origin.close()
        return {"workerd-example": code}

    def stderr(self):
        self.log.flush()
        self.log.seek(0)
        return {"workerd": self.log.read()}


def established(ports):
    """Open TCP connections to these local ports (/proc/net/tcp, state 01)."""
    n = 0
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if parts[3] == "01" and int(parts[1].rsplit(":", 1)[1], 16) in ports:
                        n += 1
        except OSError:
            pass
    return n


def sdk_answered_itself(req):
    """Why an accepted call did not run the tool, or None: the MCP SDK, not
    toolctx, answered it with its own JSON-RPC error (no data.reason: a body
    the core accepts but the SDK's schema does not, such as an id that is
    not a string or a safe integer, a bit-flipped "jsonrpc" member, a tool
    the server does not have), or took it as a notification (no id: 202)."""
    try:
        doc = json.loads(req.body)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and "id" not in doc and req.status == 202:
        return "notification (no id), 202"
    reply = req.reply or b""
    if req.status == 415 and reply.startswith(b"fail to deserialize request body"):
        # rmcp's own answer to a body its JSON-RPC types do not read (a
        # bit-flipped "jsonrpc" member, say), in plain text.
        return "415 rmcp: not a JSON-RPC message it reads"
    if reply.startswith(b"event:") or reply.startswith(b"data:"):
        # SSE: the last event with data (rmcp sends an empty priming event first).
        events = [b"".join(l[5:].strip() for l in e.split(b"\n") if l.startswith(b"data:"))
                  for e in reply.split(b"\n\n")]
        reply = next((e for e in reversed(events) if e), b"")
    try:
        answer = json.loads(reply)
        err = answer["error"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(err, dict) or (err.get("data") or {}).get("reason") or not isinstance(err.get("message"), str):
        return None
    return "%d %s" % (err.get("code"), re.sub(r"^Tool \S+ not found$", "Tool ... not found", err["message"])[:80])


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


# ------------------------------------------------------------------- main ----

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", choices=("node", "workerd", "rust"), required=True)
    ap.add_argument("--count", type=int, default=10000, help="requests to send (at least)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=4, help="client threads")
    ap.add_argument("--slow", type=int, default=4, help="drip-fed bodies, alongside the rest")
    ap.add_argument("--max-seconds", type=float, default=300, help="stop sending after this long")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="toolctx-hostile-npm-")
    keys = Keys(args.seed)
    gen = Gen(keys, args.seed, tool=TOOL)
    target = {"node": NodeTarget, "workerd": WorkerdTarget, "rust": RustTarget}[args.target](keys, work)
    own_label = args.target

    def classify(req, status, headers, body):
        traffic.classify(req, status, headers, body, upstream=target.upstream, own=OWN[args.target],
                         own_label=own_label)
        if (args.target == "rust" and req.framing == "chunked-bad" and status == 500
                and b'"reason":"internal_error"' in (body or b"")):
            # hyper reports broken chunked framing as an error reading the
            # body, after the head was handed on; the layer then refuses as
            # the core does for anything failing inside (internal_error).
            req.outcome = own_label

    sent = []
    started = time.time()
    try:
        feed = traffic.Feed(gen, args.count, started + args.max_seconds, sent,
                            on_request=lambda r: expectations(args.target, r, target.ports[r.listener]))

        def worker():
            while True:
                reqs = feed.take()
                if reqs is None:
                    return
                try:
                    traffic.run_connection(target.ports[reqs[0].listener], reqs, classify)
                except OSError:
                    pass
                for r in reqs:
                    r.outcome = r.outcome or "none"

        def slow_worker(k):
            r = gen.slow(random.Random("slow:%d:%d" % (args.seed, k)), k)
            feed.add(r)
            traffic.run_connection(target.ports["main"], [r], classify, timeout=60)

        threads = [threading.Thread(target=slow_worker, args=(k,)) for k in range(args.slow)]
        threads += [threading.Thread(target=worker) for _ in range(args.workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.time() - started

        # ------------------------------------------------------ the checks
        ports = set(target.ports.values())
        for _ in range(50):  # bounded: closed connections go promptly
            left = established(ports)
            if left == 0:
                break
            time.sleep(0.1)
        check("no connection left open to the %s front end (%d)" % (args.target, left), left == 0, left)
        alive = target.alive()
        check("the %s front end stays up: same processes %s" % (args.target, target.pids), alive)

        if args.target in ("node", "rust"):
            handed, runs, unmarked = target.ledger()
            for r in sent:
                if r.seq in handed:
                    if r.outcome == "refused":
                        r.outcome = "contradiction"
                    else:
                        r.outcome = "upstream"
            accepted = {s for s, es in handed.items() if any(e["context"] is not None for e in es)}
        else:
            with target.origin.lock:
                seen = list(target.origin.requests)
            handed, unmarked = collections.defaultdict(list), 0
            for u in seen:
                hdr = dict((k.lower(), v) for k, v in u["headers"])
                if SEQ_HEADER not in hdr:
                    unmarked += 1
                    continue
                handed[int(hdr[SEQ_HEADER])].append(u)
            accepted = {s for s, us in handed.items() if tools_call(us[0]["method"], us[0]["body"])}
            runs = collections.Counter({s: len(handed[s]) for s in accepted})

        reqs = list(sent)
        check("sent at least %d requests" % args.count, len(reqs) >= args.count, len(reqs))
        bad = [r for r in reqs if r.outcome in ("bad", "contradiction")]
        check("every answer not the handler's is a well-formed JSON-RPC refusal with a reason, status and code "
              "from the contract, or the HTTP layer's own %s; none both refused and handed on"
              % sorted(OWN[args.target]),
              not bad, [(r.cls, r.seq, r.outcome, r.status, (r.reply or b"")[:200]) for r in bad[:5]])
        by_seq = {r.seq: r for r in reqs}
        orphans = [s for s in handed if s not in by_seq]
        dup = [s for s, es in handed.items() if len(es) > 1]
        check("handed on only requests that were sent, each once (%d)" % len(handed), not orphans and not dup
              and unmarked == 0, (orphans[:5], dup[:5], unmarked))

        valid = [r for r in reqs if r.expect == "accept"]
        lost = [r for r in valid if r.seq not in accepted and not (r.outcome == "none" and r.cls == "pipeline")]
        check("every minted valid call was accepted and handed on (%d)" % len(valid), not lost,
              [(r.cls, r.seq, r.outcome, r.status, (r.reply or b"")[:200]) for r in lost[:5]])
        leaked = [r for r in reqs if r.expect in ("refuse", "none", "own") and r.seq in handed]
        check("no request meant to be refused, abandoned or refused by the HTTP layer was handed on",
              not leaked, [(r.cls, r.seq, r.expect, len(r.headers), sum(len(n) + len(v) for n, v in r.headers))
                          for r in leaked[:5]])
        own_expected = [r for r in reqs if r.expect == "own" and r.outcome not in (own_label, "none")]
        check("every request the HTTP layer must refuse itself was (%d)" % sum(r.expect == "own" for r in reqs),
              not own_expected, [(r.cls, r.seq, r.outcome, r.status) for r in own_expected[:5]])

        # The tool: runs only for accepted calls, once each.
        stray = [s for s in runs if s not in accepted]
        twice = [s for s, n in runs.items() if n > 1]
        not_run = sorted(s for s in accepted if runs[s] == 0)
        why = {s: sdk_answered_itself(by_seq[s]) for s in not_run}
        excused = [s for s in not_run if why[s]]
        unexplained = [s for s in not_run if s not in excused]
        tool_runs = sum(runs.values())
        check("tool runs %d = accepted %d - %d the MCP SDK answers itself with its own JSON-RPC error or as a "
              "notification; none outside an accepted call, none twice"
              % (tool_runs, len(accepted), len(excused)),
              not stray and not twice and not unexplained and tool_runs == len(accepted) - len(excused),
              (stray[:5], twice[:5], [(by_seq[s].cls, s, by_seq[s].status, (by_seq[s].reply or b"")[:200])
                                      for s in unexplained[:5]]))

        # Independent verdict: the core's reference runner on the same bytes.
        cases, unjudged, split_token = [], 0, 0
        refusals = [r for r in reqs if r.outcome == "refused"]
        for r in reqs:
            if r.seq not in handed and r.outcome != "refused":
                continue
            headers = r.head_values()
            if headers is None:
                unjudged += 1
                continue
            if r.outcome == "refused":
                rid, code, _, reason = r.rpc
                expect = {"outcome": "reject", "status": r.status, "code": code, "reason": reason, "id": rid}
            elif args.target in ("node", "rust"):
                ctx = handed[r.seq][0]["context"]
                expect = {"outcome": "pass"} if ctx is None else {"outcome": "accept", "context": ctx}
            else:
                expect = {"outcome": "accept"} if r.seq in accepted else {"outcome": "pass"}
            if args.target == "workerd":
                headers, joined = fetch_view(headers)
                split_token += joined
            cases.append(vector_case(r, headers, r.body, expect, keys))
        ok, out = core_judgement(cases, keys, work, "requests from tests/hostile/npm.py, with the verdict the "
                                 "%s front end reached" % args.target)
        tail = out.splitlines()[-1] if out else ""
        check("core reference runner reaches the same verdict for every request handed on and every refusal "
              "(%d cases; %s)" % (len(cases), tail), ok and tail.startswith("%d passed, 0 failed" % len(cases)),
              "\n".join(out.splitlines()[:10]))

        codes = target.stop()
        errs = target.stderr()
        noisy = {k: [l for l in v.splitlines() if any(w in l for w in ("Unhandled", "unhandled", "Uncaught",
                                                                      "uncaught", "FATAL", "Segmentation"))]
                 for k, v in errs.items()}
        check("exits cleanly %s; nothing unhandled or uncaught on stderr" % codes,
              alive and all(c == 0 for c in codes.values()) and not any(noisy.values()),
              (codes, {k: v[:5] for k, v in noisy.items()}))

        # ------------------------------------------------------ the summary
        print("\nhostile traffic through the %s front end: %d requests in %.1f s (%d workers, %d drip-fed), seed %d"
              % (args.target, len(reqs), elapsed, args.workers, args.slow, args.seed))
        per = collections.defaultdict(collections.Counter)
        for r in reqs:
            per[r.cls][r.outcome] += 1
        print("%-18s %6s %9s %8s %9s %9s" % ("class", "sent", "handed-on", "refused", own_label + "-own",
                                            "no-answer"))
        for cls in sorted(per):
            c = per[cls]
            print("%-18s %6d %9d %8d %9d %9d" % (cls, sum(c.values()), c["upstream"], c["refused"], c[own_label],
                                                c["none"]))
        reasons = collections.Counter(r.rpc[3] for r in refusals)
        print("refused by toolctx, per reason (%d): %s" % (len(refusals), ", ".join(
            "%s %d" % kv for kv in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))))
        own = collections.Counter("%s %d" % (r.cls, r.status) for r in reqs if r.outcome == own_label)
        print("refused by the HTTP layer itself (%s), per class and status: %s"
              % (own_label, ", ".join("%s × %d" % kv for kv in sorted(own.items())) or "none"))
        print("handed on: %d (accepted with a verified context %d, passed %d); tool runs %d; accepted but answered "
              "by the MCP SDK itself %d" % (len(handed), len(accepted), len(handed) - len(accepted), tool_runs,
                                            len(excused)))
        if excused:
            print("  answered by the MCP SDK itself: %s" % ", ".join(
                "%s %d" % kv for kv in sorted(collections.Counter(why[s] for s in excused).items())))
        print("judged by the core runner: %d; not judged (header bytes not UTF-8): %d" % (len(cases), unjudged))
        if args.target == "workerd":
            print("token headers with a comma, judged as the Fetch API shows them (field lines): %d" % split_token)
    finally:
        try:
            target.stop()
        except Exception:  # noqa: BLE001 - already stopped
            pass
        if not os.environ.get("TOOLCTX_HOSTILE_KEEP"):
            shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
