#!/usr/bin/env python3
"""The Python MCP SDK's client (`mcp` 2.3.0) against examples/java-server
(java-sdk 2.2.0 on Jetty behind ToolctxFilter) or examples/spring-server
(Spring AI 2.0.1's WebMvc transport on java-sdk 2.0.0, behind toolctx-spring),
on 127.0.0.1: the client's `initialize()` and java-sdk's sessions
(Mcp-Session-Id), then the checks of tests/rust-server/python_client.py
(accepted calls see their context, refused calls do not run, progress, the
probe).

    python_client.py examples/java-server/run
    python_client.py examples/spring-server/run

Prints one line per check and closes with `N passed, N failed`.
"""

from __future__ import annotations

import asyncio
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rust-server"))
from python_client import Checks, mode  # noqa: E402


async def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    checks = Checks()
    await mode(checks, sys.argv[1], "session", [], discover=False)
    return checks.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
