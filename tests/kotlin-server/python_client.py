#!/usr/bin/env python3
"""The Python MCP SDK's client (`mcp` 2.3.0) against examples/kotlin-server
(the Java artifact from Kotlin: java-sdk 2.2.0 on Jetty behind
ToolctxFilter), on 127.0.0.1, one server, one session: the checks of
tests/rust-server/python_client.py (accepted calls see their context,
refused calls do not run, progress through `Progress`, the probe), then
`Idempotent` from Kotlin: the platform's retry of create_invoice (same
context, a fresh token) gets the first result back marked replayed and the
tool runs once; the same key with other arguments is refused.

    python_client.py examples/kotlin-server/run

Prints one line per check and closes with `N passed, N failed`.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
import uuid

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rust-server"))
from python_client import SECRET, Checks, Platform, calls, context, mint, runs, start  # noqa: E402


async def retries(checks: Checks, session: ClientSession, platform: Platform, record: str) -> None:
    claims, meta = context("task-f", "create_invoice")

    async def again(amount: int):
        # The platform's retry: the same call (idempotency key), a fresh token.
        platform.token = mint({**claims, "jti": str(uuid.uuid4()), "iat": int(time.time())}, SECRET)
        return await session.call_tool("create_invoice", {"amount": amount}, meta=meta)

    before = runs(record).count("create_invoice")
    first = await again(42)
    retry = await again(42)
    checks.check("create_invoice: the retry gets the first result back, marked replayed",
                 retry.structured_content == first.structured_content and (retry.meta or {}).get("agentarea/replayed") is True
                 and (first.structured_content or {}).get("amount") == 42, (first, retry))
    checks.check("create_invoice: the tool ran once", runs(record).count("create_invoice") == before + 1, runs(record))
    other = await again(43)
    checks.check("create_invoice: the same key with other arguments is refused (conflict)",
                 other.is_error is True and (other.meta or {}).get("toolctx/idempotency") == "conflict"
                 and runs(record).count("create_invoice") == before + 1, other)


async def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    checks = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        record = os.path.join(tmp, "record.jsonl")
        open(record, "w").close()
        proc, url = start(sys.argv[1], record)
        try:
            platform = Platform()
            async with httpx2.AsyncClient(event_hooks={"request": [platform.on_request]}, timeout=30) as http:
                async with streamable_http_client(url, http_client=http) as streams:
                    async with ClientSession(streams[0], streams[1]) as session:
                        init = await session.initialize()
                        checks.check(f"initialize ({init.protocol_version})",
                                     init.protocol_version.startswith("2025"), init.protocol_version)
                        await calls(checks, "session", session, platform, record)
                        await retries(checks, session, platform, record)
        finally:
            if proc.stdin:
                proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return checks.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
