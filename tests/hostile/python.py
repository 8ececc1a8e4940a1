#!/usr/bin/env python3
"""Hostile traffic through the Python front end: the ASGI middleware in the
example server (examples/python-server: the official MCP SDK's Streamable
HTTP app behind `toolctx.mcp.protect`, under uvicorn).

    .tools/venv/bin/python tests/hostile/python.py [--count 10000] [--seed 1] [--workers 4]

The same seeded generator and checks as every front end's driver
(tests/hostile/traffic.py), every call naming the tool `toolctx_probe`:
two copies of the example server, one without and one with a static
credential, each started with `--tuix --record FILE`, so that the server
writes down every request the middleware handed on (its headers, the
context it verified) and every tool run. Checks besides the shared ones:
the servers stay up and exit cleanly, no traceback on their stderr.
uvicorn (h11) answers framing it cannot parse with its own 400, counted
apart; it has no header limit of its own below Envoy's. Run with the interpreter that has the wheel (.tools/venv).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import npm  # noqa: E402
import traffic  # noqa: E402



class PythonTarget(npm.Servers):
    """Two copies of examples/python-server/server.py (official MCP SDK)."""

    name = "python"
    own = frozenset({400})
    forward = {"tuix": True}

    def __init__(self, keys, work):
        server = os.path.join(traffic.ROOT, "examples", "python-server", "server.py")
        super().__init__([sys.executable, server, "--tuix"], keys, work)

    def expect(self, req):
        # Envoy's own header limits (100 headers, 60 KiB: 431); uvicorn's h11
        # hands both on and the core judges.
        if req.expect == "refuse" and (len(req.headers) >= npm.ENVOY_MAX_HEADERS or any(
                n == "x-pad" and len(v) >= npm.ENVOY_MAX_HEADER_BYTES for n, v in req.headers)):
            req.expect = "any"


def main():
    return traffic.main(lambda _name, keys, work: (PythonTarget(keys, work),
                                                   "the Python ASGI middleware (examples/python-server)", npm.TOOL),
                        __doc__)


if __name__ == "__main__":
    sys.exit(main())
