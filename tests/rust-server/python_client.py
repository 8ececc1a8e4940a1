#!/usr/bin/env python3
"""The Python MCP SDK's client (`mcp` 2.3.0) against examples/rust-server
(rmcp behind toolctx-tower), or examples/go-server (go-sdk behind the Go
middleware: the same flags and tools, scripts/test-go), on 127.0.0.1,
three ways:

  stateless  the server with --stateless, the client's `initialize()`
             (2025-11-25, rmcp's stateless mode);
  session    the server in rmcp's legacy session mode (its default), the
             client's `initialize()` (Mcp-Session-Id);
  2026-07-28 the client's `discover()` (`server/discover`, per-request
             metadata; rmcp serves it statelessly).

Each call carries a fresh token in X-AgentArea-Context (an httpx2 event
hook, as the platform adds it) and `_meta` from the same claims; tokens are
minted here with the standard library (HMAC-SHA256), never with toolctx.
The server's --record file says which requests reached rmcp and which
tools ran, so a refused call is seen not to run.

    python_client.py SERVER_BINARY

Prints one line per check and closes with `N passed, N failed`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from checks import Checks, mint  # noqa: E402

INSTANCE = "rust-server-" + secrets.token_hex(4)
SECRET = "rust-server-secret-" + secrets.token_hex(16)


def context(task: str, tool: str) -> tuple[dict, dict]:
    """A token's claims and the matching `_meta` (the agentarea/* keys)."""
    call = "call-" + uuid.uuid4().hex[:8]
    ctx = {"protocol": "1", "task_id": task, "tool_call_id": call, "workspace_id": "ws-1",
           "idempotency_key": f"{task}:{call}", "end_user_id": "user-42"}
    now = int(time.time())
    claims = {"iss": "agentarea", "aud": INSTANCE, "iat": now, "exp": now + 300,
              "jti": str(uuid.uuid4()), "tool": tool, **ctx}
    return claims, {f"agentarea/{k}": v for k, v in ctx.items()}


class Platform:
    """Puts the next token on the tools/call request that carries it."""

    def __init__(self) -> None:
        self.token: str | None = None

    async def on_request(self, request: httpx2.Request) -> None:
        if request.method != "POST" or self.token is None:
            return
        try:
            message = json.loads(request.content)
        except ValueError:
            return
        if isinstance(message, dict) and message.get("method") == "tools/call":
            request.headers["x-agentarea-context"] = self.token


def start(binary: str, record: str, *flags: str) -> tuple[subprocess.Popen, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLCTX_")}
    env.update(TOOLCTX_INSTANCE_ID=INSTANCE, TOOLCTX_SECRET=SECRET)
    p = subprocess.Popen([binary, "--port", "0", "--exit-with-stdin", "--record", record, *flags],
                         env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline() if p.stdout else ""
    m = re.match(r"listening (http://127\.0\.0\.1:\d+/mcp)", line)
    if not m:
        p.kill()
        raise RuntimeError(f"the server did not start: {line!r}")
    return p, m.group(1)


def runs(record: str) -> list[str]:
    with open(record, encoding="utf-8") as f:
        return [json.loads(line)["run"] for line in f if '"run"' in line]


async def mode(checks: Checks, binary: str, name: str, flags: list[str], discover: bool,
               more: Callable[[Checks, ClientSession, Platform, str], Awaitable[None]] | None = None) -> None:
    """The checks of `calls` on one server and session, then `more` (another
    driver's checks) on the same ones."""
    with tempfile.TemporaryDirectory() as tmp:
        record = os.path.join(tmp, "record.jsonl")
        open(record, "w").close()
        proc, url = start(binary, record, *flags)
        try:
            platform = Platform()
            async with httpx2.AsyncClient(event_hooks={"request": [platform.on_request]}, timeout=30) as http:
                async with streamable_http_client(url, http_client=http) as streams:
                    async with ClientSession(streams[0], streams[1]) as session:
                        if discover:
                            result = await session.discover()
                            version = getattr(result, "protocol_version", None) or getattr(result, "protocolVersion", None)
                            checks.check(f"{name}: server/discover", result is not None, result)
                        else:
                            init = await session.initialize()
                            version = init.protocol_version
                            checks.check(f"{name}: initialize ({version})", version.startswith("2025"), version)
                        await calls(checks, name, session, platform, record)
                        if more is not None:
                            await more(checks, session, platform, record)
        finally:
            if proc.stdin:
                proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


async def calls(checks: Checks, name: str, session: ClientSession, platform: Platform, record: str) -> None:
    async def call(tool: str, args: dict, task: str | None, claim_tool: str | None = None, **kw: object):
        if task is None:
            platform.token = None
            return await session.call_tool(tool, args, **kw)
        claims, meta = context(task, claim_tool or tool)
        platform.token = mint(claims, SECRET)
        return await session.call_tool(tool, args, meta=meta, **kw)

    r = await call("whoami", {}, "task-a")
    saw = r.structured_content or {}
    checks.check(f"{name}: accepted, the tool sees the verified context",
                 (saw.get("context") or {}).get("task_id") == "task-a" and saw.get("verified_here") is True, saw)
    r = await call("get_order", {"orderId": "A-1"}, "task-b")
    text = r.content[0].text if r.content else ""
    checks.check(f"{name}: a second call on the same session has its own context",
                 "task task-b for user-42" in text, text)

    before = runs(record)
    for label, reason, kwargs in [
        ("no token", "token_missing", {"task": None}),
        ("a token for another tool", "tool_mismatch", {"task": "task-c", "claim_tool": "get_order"}),
    ]:
        try:
            await call("whoami", {}, **kwargs)
            checks.check(f"{name}: {label} is refused ({reason})", False, "the call was accepted")
        except MCPError as e:
            data = e.error.data if isinstance(e.error.data, dict) else {}
            checks.check(f"{name}: {label} is refused ({reason})", data.get("reason") == reason, e.error)
    checks.check(f"{name}: no refused call ran", runs(record) == before, runs(record)[len(before):])

    progress: list[tuple[float, float | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    r = await call("export_report", {"pages": 2}, "task-d", progress_callback=on_progress)
    checks.check(f"{name}: progress, the final report always sent",
                 progress[-1:] == [(2.0, 2.0)] and "exported 2 pages" in r.content[0].text, progress)

    r1 = await call("toolctx_probe", {}, "task-e")
    r2 = await call("toolctx_probe", {}, "task-e")
    checks.check(f"{name}: the probe counts its runs",
                 (r2.structured_content or {}).get("runs") == (r1.structured_content or {}).get("runs", 0) + 1,
                 (r1.structured_content, r2.structured_content))


async def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    binary = sys.argv[1]
    checks = Checks()
    await mode(checks, binary, "stateless", ["--stateless"], discover=False)
    await mode(checks, binary, "session", [], discover=False)
    await mode(checks, binary, "2026-07-28", [], discover=True)
    return checks.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
