#!/usr/bin/env python3
"""Servers of five languages behind one Redis: the Node example
(examples/node-server, MCP SDK v2), the Python example
(examples/python-server, the official SDK), the Rust example
(examples/rust-server, rmcp behind toolctx-tower), the Go example
(examples/go-server, go-sdk behind the Go middleware) and the Java example
(examples/java-server, java-sdk behind ToolctxFilter), and the Spring
example (examples/spring-server, Spring AI behind toolctx-spring, its
Redis from `toolctx.redis-url`), each started with
`--redis` against one `redis-server` on 127.0.0.1 that this test starts and
stops.

For every ordered pair of servers (A, B):
  - idempotency: `create_invoice` run on A, then the platform's retry (same
    task, tool call, idempotency key and arguments, a new token) sent to B
    is answered from the store: B's answer is A's result with
    `_meta["agentarea/replayed"] = true`, and B runs nothing;
  - conflict: the same key with other arguments on B is refused, not run;
  - replay guard: a token accepted by A is refused `token_replayed` by B;
  - protocol revisions: for every revision R1 that A serves and R2 that B
    serves, a call answered by A at R1 and retried on B at R2 is replayed as
    a valid R2 result (`resultType` present exactly when R2 is 2026-07-28),
    A's result otherwise; at 2026-07-28 the retry goes through the official
    TypeScript client pinned to it (client.mjs), which must accept it. The
    stored entry holds no `resultType`, its members in RFC 8785 order.
    Node, Python, Rust, Go and Java serve 2025-11-25 and 2026-07-28 (the
    Java example on one endpoint: java-sdk 2.2's modern server for
    2026-07-28, its stateless transport for 2025-11-25); the Spring example
    2025-11-25 only (Spring AI 2.0.1, on java-sdk 2.0.0, has no 2026-07-28
    server: java/README.md).
Then the store holds exactly one key per idempotency key, in the layout every
language writes.

Tokens are minted here with the standard library (HMAC-SHA256), never with
toolctx. Each server's --record file says which tool bodies ran.

    redis.py --node-dir DIR --python PY --rust BINARY --go BINARY --java RUN --spring RUN --redis-server PATH [--servers a,b,...]

Prints one line per check and closes with `N passed, N failed`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

INSTANCE = "cross-language-" + secrets.token_hex(4)
SECRET = "cross-language-secret-" + secrets.token_hex(16)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IDEM_PREFIX = b"toolctx:idem:"

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from checks import Checks, mint  # noqa: E402
import ports  # noqa: E402


class Call:
    """One tool call as the platform makes it: a context, and a fresh token per attempt."""

    def __init__(self, tool: str) -> None:
        task, call = "task-" + uuid.uuid4().hex[:8], "call-" + uuid.uuid4().hex[:8]
        self.tool = tool
        self.ctx = {"protocol": "1", "task_id": task, "tool_call_id": call, "workspace_id": "ws-1",
                    "idempotency_key": f"{task}:{call}"}

    def token(self) -> str:
        now = int(time.time())
        return mint({"iss": "agentarea", "aud": INSTANCE, "iat": now, "exp": now + 300,
                     "jti": str(uuid.uuid4()), "tool": self.tool, **self.ctx}, SECRET)

    def body(self, arguments: dict) -> bytes:
        meta = {f"agentarea/{k}": v for k, v in self.ctx.items()}
        doc = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": self.tool, "arguments": arguments, "_meta": meta}}
        return json.dumps(doc).encode()


LEGACY, MODERN = "2025-11-25", "2026-07-28"
REVISIONS = {"node": [LEGACY, MODERN], "python": [LEGACY, MODERN], "rust": [LEGACY, MODERN],
             "go": [LEGACY, MODERN], "java": [LEGACY, MODERN], "spring": [LEGACY]}
CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "client.mjs")


def call_at(url: str, call: "Call", arguments: dict, revision: str) -> tuple[int, dict, str | None]:
    """One tools/call at `revision`: raw HTTP for 2025-11-25, the official
    TypeScript client pinned to 2026-07-28 otherwise. The status, the
    JSON-RPC response as sent, and the client's error when it refused it."""
    if revision == LEGACY:
        status, msg = post(url, call.body(arguments), call.token())
        return status, msg, None
    meta = {f"agentarea/{k}": v for k, v in call.ctx.items()}
    doc = json.dumps({"name": call.tool, "arguments": arguments, "_meta": meta})
    out = subprocess.run(["node", CLIENT, url, call.token(), doc], capture_output=True, text=True, timeout=60)
    try:
        answer = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return 0, {}, f"client.mjs: {out.stderr.strip()[-400:]}"
    return answer.get("status", 0), answer.get("wire") or {}, answer.get("error")


def post(url: str, body: bytes, token: str) -> tuple[int, dict]:
    """A stateless Streamable HTTP POST; the JSON-RPC answer (JSON or the SSE stream's message)."""
    req = urllib.request.Request(url, data=body, method="POST", headers={
        "content-type": "application/json", "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25", "x-agentarea-context": token})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, raw, kind = r.status, r.read().decode(), r.headers.get("content-type", "")
    except urllib.error.HTTPError as e:
        status, raw, kind = e.code, e.read().decode(), e.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        for line in raw.splitlines():
            if line.startswith("data:") and line[5:].strip():
                msg = json.loads(line[5:])
                if "result" in msg or "error" in msg:
                    return status, msg
        return status, {}
    return status, json.loads(raw) if raw else {}


def free_port() -> int:
    return ports.free_port()


class Redis:
    """redis-server on a free 127.0.0.1 port, nothing saved; a tiny RESP client."""

    def __init__(self, binary: str) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen([binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                if self.command("PING") == b"PONG":
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def command(self, *args: str) -> object:
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            out = b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in args)
            s.sendall(out)
            f = s.makefile("rb")
            return self._read(f)

    def _read(self, f) -> object:
        line = f.readline().rstrip(b"\r\n")
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else f.read(n + 2)[:-2]
        if kind == b"*":
            return [self._read(f) for _ in range(int(rest))]
        raise RuntimeError(f"unexpected reply {line!r}")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


class Server:
    def __init__(self, name: str, argv: list[str], work: str, redis_url: str, cwd: str | None = None) -> None:
        self.name = name
        self.record = os.path.join(work, f"{name}.jsonl")
        open(self.record, "w").close()
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLCTX_")}
        env.update(TOOLCTX_INSTANCE_ID=INSTANCE, TOOLCTX_SECRET=SECRET)
        self.proc = subprocess.Popen([*argv, "--port", "0", "--exit-with-stdin", "--record", self.record,
                                      "--redis", redis_url], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        m = re.match(r"listening (http://127\.0\.0\.1:\d+/mcp)", line)
        if not m:
            self.stop()
            raise RuntimeError(f"{name} did not start: {line!r}")
        self.url = m.group(1)

    def runs(self, tool: str) -> int:
        with open(self.record, encoding="utf-8") as f:
            return sum(1 for line in f if json.loads(line).get("run") == tool)

    def stop(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# Members an SDK writes or leaves out as it likes, with one meaning either
# way: `isError: false` (the default) and the 2026-07-28 `resultType` of a
# plain result (which the Python SDK and rmcp keep in what they store, and
# leave out for a 2025-era client).
DEFAULTS = {"isError": False, "resultType": "complete"}


def plain(result: dict) -> dict:
    """The result less the replay mark, the SDK's own per-response stamps
    (`io.modelcontextprotocol/*`, such as 2026-07-28's `serverInfo`; an
    emptied `_meta` too) and the defaults above, to compare a replay with
    the first answer."""
    r = {k: v for k, v in result.items() if DEFAULTS.get(k, object()) != v}
    meta = {k: v for k, v in (r.get("_meta") or {}).items()
            if k != "agentarea/replayed" and not k.startswith("io.modelcontextprotocol/")}
    if meta:
        r["_meta"] = meta
    else:
        r.pop("_meta", None)
    return r


def utf16(name: str) -> bytes:
    return name.encode("utf-16-be")


def canonical_order(v: object) -> bool:
    """Every object's members in RFC 8785 order (UTF-16 code units of the names)."""
    if isinstance(v, list):
        if v and all(isinstance(m, tuple) for m in v):
            names = [utf16(k) for k, _ in v]
            return names == sorted(names) and all(canonical_order(x) for _, x in v)
        return all(canonical_order(x) for x in v)
    return True


def across_revisions(checks: Checks, a: Server, b: Server, redis: Redis) -> None:
    for r1 in REVISIONS[a.name]:
        for r2 in REVISIONS[b.name]:
            name = f"{a.name}@{r1} -> {b.name}@{r2}"
            call = Call("create_invoice")
            b_before = b.runs("create_invoice")
            status, first, error = call_at(a.url, call, {"amount": 7}, r1)
            result = first.get("result", {})
            checks.check(f"{name}: first call answered", status == 200 and error is None and "amount" in json.dumps(
                result), (status, first, error))
            held = redis.command("GET", IDEM_PREFIX.decode() + ":" + call.ctx["idempotency_key"])
            entry = json.loads(held, object_pairs_hook=lambda ps: list(ps)) if held else []
            stored = dict(entry).get("result", []) if isinstance(entry, list) else []
            checks.check(f"{name}: the entry {a.name} stored is era-neutral (no resultType, RFC 8785 order)",
                         bool(stored) and "resultType" not in dict(stored) and canonical_order(stored), held)
            status, retry, error = call_at(b.url, call, {"amount": 7}, r2)
            again = retry.get("result", {})
            checks.check(f"{name}: replayed on {b.name}, not run",
                         status == 200 and (again.get("_meta") or {}).get("agentarea/replayed") is True
                         and b.runs("create_invoice") == b_before, (status, retry))
            checks.check(f"{name}: resultType present exactly for {MODERN} and later",
                         ("resultType" in again) == (r2 >= MODERN) and again.get("resultType", "complete") == "complete",
                         again)
            checks.check(f"{name}: the replay is {a.name}'s result", plain(again) == plain(result), (again, result))
            if r2 == MODERN:
                checks.check(f"{name}: the TypeScript client pinned to {MODERN} accepts the replay", error is None, error)


def pair(checks: Checks, a: Server, b: Server, redis: Redis) -> None:
    name = f"{a.name} -> {b.name}"
    call = Call("create_invoice")
    a_before, b_before = a.runs("create_invoice"), b.runs("create_invoice")
    status, first = post(a.url, call.body({"amount": 42}), call.token())
    result = first.get("result", {})
    checks.check(f"{name}: first call runs on {a.name}",
                 status == 200 and not result.get("isError") and a.runs("create_invoice") == a_before + 1
                 and (result.get("_meta") or {}).get("agentarea/replayed") is None, (status, first))
    status, retry = post(b.url, call.body({"amount": 42}), call.token())
    again = retry.get("result", {})
    checks.check(f"{name}: the retry on {b.name} is replayed, not run",
                 status == 200 and (again.get("_meta") or {}).get("agentarea/replayed") is True
                 and b.runs("create_invoice") == b_before, (status, retry))
    checks.check(f"{name}: the replay is {a.name}'s result as it sent it",
                 plain(again) == plain(result), (again, result))
    status, other = post(b.url, call.body({"amount": 43}), call.token())
    conflict = other.get("result", {})
    checks.check(f"{name}: the same key with other arguments is a conflict on {b.name}",
                 status == 200 and conflict.get("isError") is True
                 and (conflict.get("_meta") or {}).get("toolctx/idempotency") == "conflict"
                 and b.runs("create_invoice") == b_before, (status, other))
    # The default namespace is "": the store key is ":" + the idempotency key.
    stored = redis.command("KEYS", IDEM_PREFIX.decode() + "*" + call.ctx["idempotency_key"])
    checks.check(f"{name}: one store key for the idempotency key, the shared layout",
                 stored == [IDEM_PREFIX + b":" + call.ctx["idempotency_key"].encode()], stored)

    token_call = Call("whoami")
    token = token_call.token()
    status, ok = post(a.url, token_call.body({}), token)
    checks.check(f"{name}: a token accepted by {a.name}", status == 200 and "result" in ok, (status, ok))
    status, replayed = post(b.url, token_call.body({}), token)
    reason = ((replayed.get("error") or {}).get("data") or {}).get("reason")
    checks.check(f"{name}: the same token refused token_replayed by {b.name}",
                 status == 401 and reason == "token_replayed", (status, replayed))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--node-dir", default=os.path.join(ROOT, "examples", "node-server"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--rust", default=os.path.join(ROOT, "target", "debug", "toolctx-example-rust-server"))
    ap.add_argument("--go", default=os.path.join(ROOT, "target", "go", "go-server"))
    ap.add_argument("--java", default=os.path.join(ROOT, "examples", "java-server", "run"))
    ap.add_argument("--spring", default=os.path.join(ROOT, "examples", "spring-server", "run"))
    ap.add_argument("--redis-server", default="redis-server")
    ap.add_argument("--servers", default="node,python,rust,go,java,spring",
                    help="the servers to pair (default: all six)")
    args = ap.parse_args()
    checks = Checks()
    redis = Redis(args.redis_server)
    servers: list[Server] = []
    try:
        with tempfile.TemporaryDirectory() as work:
            argv = {
                "node": (["node", "server.mjs"], args.node_dir),
                "python": ([args.python, os.path.join(ROOT, "examples", "python-server", "server.py")], None),
                "rust": ([args.rust, "--stateless"], None),
                "go": ([args.go, "--stateless"], None),
                "java": ([args.java, "--stateless"], None),
                "spring": ([args.spring, "--stateless"], None),
            }
            servers = [Server(name, argv[name][0], work, redis.url, cwd=argv[name][1])
                       for name in args.servers.split(",")]
            for a in servers:
                for b in servers:
                    if a is not b:
                        pair(checks, a, b, redis)
                        across_revisions(checks, a, b, redis)
            for s in servers:
                s.stop()
            servers = []
    finally:
        for s in servers:
            s.stop()
        redis.stop()
    return checks.close()


if __name__ == "__main__":
    sys.exit(main())
