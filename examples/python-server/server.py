"""An MCP server protected in-process by toolctx: the official MCP SDK
(``mcp``, ``MCPServer``) or FastMCP (``--fastmcp``), stateless Streamable
HTTP behind ``toolctx.asgi.ToolctxMiddleware``, served by uvicorn on
127.0.0.1. See README.md."""

from __future__ import annotations

import argparse
import contextvars
import json
import os
import socket
import sys
import threading

import anyio
import uvicorn

import toolctx
from toolctx.helpers import IdempotencyStore, MemoryIdempotencyStore, RedisIdempotencyStore, idempotent, progress

RUNS = {"probe": 0}
# The headers of the request being served, for --record's tool-run lines.
_HEADERS: contextvars.ContextVar[list[list[str]]] = contextvars.ContextVar("headers", default=[])


class Record:
    """``--record FILE`` (for test drivers, as examples/node-server's): one
    JSON line for every request the middleware hands on to the MCP app,
    ``{"handed_on": method, "headers": [[name, value], ...], "context":
    verified context or null}``, and one for every tool run, ``{"run": tool,
    "headers": [...]}``, each written before the request goes on or the tool
    runs. Header bytes are read as Latin-1, as Node shows them."""

    def __init__(self, path: str | None) -> None:
        self.file = open(path, "a", buffering=1, encoding="utf-8") if path else None

    def write(self, entry: dict) -> None:
        if self.file is not None:
            self.file.write(json.dumps(entry) + "\n")

    def run(self, tool: str) -> None:
        self.write({"run": tool, "headers": _HEADERS.get()})

    def wrap(self, app):
        """``app`` with a line per request handed on (inside the middleware)."""
        if self.file is None:
            return app

        async def recording(scope, receive, send):
            if scope["type"] == "http":
                headers = [[n.decode("latin-1"), v.decode("latin-1")] for n, v in scope["headers"]]
                context = toolctx.current_context()
                self.write({"handed_on": scope["method"], "headers": headers,
                            "context": json.loads(context.to_json()) if context else None})
                _HEADERS.set(headers)
            await app(scope, receive, send)

        return recording


RECORD = Record(None)


def verifier(context_optional: bool, tuix: bool = False, redis_url: str | None = None) -> toolctx.Verifier:
    secrets = [os.environ["TOOLCTX_SECRET"]]
    if os.environ.get("TOOLCTX_SECRET_PREVIOUS"):
        secrets.append(os.environ["TOOLCTX_SECRET_PREVIOUS"])
    credential = None
    if os.environ.get("TOOLCTX_CREDENTIAL"):
        credential = {"header": "authorization", "values": [os.environ["TOOLCTX_CREDENTIAL"]]}
    return toolctx.Verifier(
        os.environ["TOOLCTX_INSTANCE_ID"],
        secrets,
        credential=credential,
        require_context=not context_optional,
        # What goes upstream is the core's decision (CONTRACT §7).
        forward={"tuix": True} if tuix else None,
        # --redis: token ids in Redis, shared with the other replicas (and the
        # Node and Rust examples); redis-py's synchronous client.
        replay=toolctx.RedisReplayStore(redis_client(redis_url)) if redis_url else toolctx.MemoryReplay(),
    )


def redis_client(url: str):
    import redis

    return redis.Redis.from_url(url)


def invoice_store(redis_url: str | None) -> IdempotencyStore:
    """create_invoice's results: in this process, or (--redis) in Redis."""
    if redis_url is None:
        return MemoryIdempotencyStore()
    import redis.asyncio

    return RedisIdempotencyStore(redis.asyncio.Redis.from_url(redis_url))


# The tools, written once for both frameworks: each takes the framework's
# Context as `ctx`, which toolctx.context_from and progress() read.
async def get_order(order_id: str, ctx) -> dict:
    """An order, for the task the platform vouched for."""
    context = toolctx.context_from(ctx)
    return {"order_id": order_id, "task_id": context.task_id if context else None, "status": "shipped"}


async def export_report(pages: int, ctx) -> str:
    """Progress at the platform's rate while the pages are written."""
    report = progress(ctx)
    for page in range(1, pages + 1):
        await anyio.sleep(0.05)
        await report(page, pages, f"page {page} of {pages}")
    return f"report of {pages} pages"


async def create_invoice(amount: int, ctx) -> dict:
    """Not safe to run twice: a retry gets the first result back."""
    RECORD.run("create_invoice")
    context = toolctx.context_from(ctx)
    return {"invoice": f"inv-{context.idempotency_key}", "amount": amount}


async def whoami(ctx) -> dict:
    """The verified context the server saw."""
    context = toolctx.context_from(ctx)
    return {"context": context.to_dict() if context else None}


async def toolctx_probe() -> dict:
    """How many times this tool ran in this process (for `toolctx conformance`)."""
    RECORD.run("toolctx_probe")
    RUNS["probe"] += 1
    return {"runs": RUNS["probe"]}


def tools(invoices: IdempotencyStore) -> tuple:
    """The tools both frameworks serve; create_invoice guarded by ``invoices``."""
    return (get_order, export_report, idempotent(store=invoices)(create_invoice), whoami)


def sdk_app(v: toolctx.Verifier | None, invoices: IdempotencyStore):
    from mcp.server.mcpserver import Context, MCPServer

    server = MCPServer("toolctx-python-example")
    for fn in tools(invoices):
        fn.__annotations__["ctx"] = Context
        server.add_tool(fn)
    server.add_tool(toolctx_probe)
    app = RECORD.wrap(server.streamable_http_app(stateless_http=True))
    return toolctx.mcp.protect(app, v) if v is not None else app


def fastmcp_app(v: toolctx.Verifier | None, invoices: IdempotencyStore):
    from fastmcp import Context, FastMCP

    import toolctx.fastmcp

    server = FastMCP("toolctx-python-example")
    for fn in tools(invoices):
        fn.__annotations__["ctx"] = Context
        server.tool(fn)
    server.tool(toolctx_probe)
    middleware = [toolctx.fastmcp.middleware(v)] if v is not None else []
    return server.http_app(path="/mcp", stateless_http=True, middleware=middleware)


def main() -> None:
    import toolctx.mcp  # noqa: F401

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "0")))
    parser.add_argument("--fastmcp", action="store_true", help="FastMCP instead of the official SDK's MCPServer")
    parser.add_argument("--context-optional", action="store_true", help="require_context=False")
    parser.add_argument("--no-verify", action="store_true", help="no toolctx at all (to compare)")
    parser.add_argument("--tuix", action="store_true", help='forward={"tuix": True} (X-Session-Id, X-Idempotency-Key)')
    parser.add_argument("--record", metavar="FILE", help="one JSON line per request handed on and per tool run")
    parser.add_argument("--exit-with-stdin", action="store_true", help="exit when standard input closes")
    parser.add_argument("--redis", metavar="URL",
                        help="the replay guard and create_invoice's results in Redis (redis://127.0.0.1:PORT)")
    args = parser.parse_args()
    global RECORD
    RECORD = Record(args.record)
    v = None if args.no_verify else verifier(args.context_optional, args.tuix, args.redis)
    invoices = invoice_store(args.redis)
    app = fastmcp_app(v, invoices) if args.fastmcp else sdk_app(v, invoices)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    # Listening before the line is printed: a client may connect at once.
    sock.listen(2048)
    print(f"listening http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    if args.exit_with_stdin:
        def watch() -> None:
            sys.stdin.read()
            server.should_exit = True

        threading.Thread(target=watch, daemon=True).start()
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
