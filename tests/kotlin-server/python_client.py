#!/usr/bin/env python3
"""The Python MCP SDK's client (`mcp` 2.3.0) against examples/kotlin-server
(the Java artifact from Kotlin: java-sdk 2.2.0 on Jetty behind
ToolctxFilter), on 127.0.0.1, one server and session: the checks of
tests/rust-server/python_client.py's `mode` (accepted calls see their
context, refused calls do not run, progress through `Progress`, the probe),
then
`Idempotent` from Kotlin: the platform's retry of create_invoice (same
context, a fresh token) gets the first result back marked replayed and the
tool runs once; the same key with other arguments is refused.

    python_client.py examples/kotlin-server/run

Prints one line per check and closes with `N passed, N failed`.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid

from mcp import ClientSession
from mcp.types import CallToolResult

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rust-server"))
from python_client import SECRET, Checks, Platform, context, mint, mode, runs  # noqa: E402


async def retries(checks: Checks, session: ClientSession, platform: Platform, record: str) -> None:
    claims, meta = context("task-f", "create_invoice")

    async def again(amount: int) -> CallToolResult:
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
    await mode(checks, sys.argv[1], "session", [], discover=False, more=retries)
    return checks.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
