"""FastMCP: the middleware through FastMCP's own ``http_app(middleware=...)``
hook, and the context in a tool.

::

    from fastmcp import Context, FastMCP
    import toolctx
    from toolctx.fastmcp import middleware

    mcp = FastMCP("orders")

    @mcp.tool
    async def get_order(order_id: str, ctx: Context) -> str:
        context = toolctx.context_from(ctx)
        return f"order {order_id} for task {context.task_id}"

    app = mcp.http_app(middleware=[middleware(toolctx.Verifier(instance_id, [secret]))])

The middleware runs before FastMCP reads the request, so a refused call
never reaches it. ``context_from(ctx)`` reads the context from the scope of
the HTTP request FastMCP keeps for the call (``ctx.request_context.request``,
or ``fastmcp.server.dependencies.get_http_request()``).
"""

from __future__ import annotations

from typing import Any

from toolctx._native import AivaxVerifier, Verifier
from toolctx.asgi import ToolctxMiddleware
from toolctx.context import aivax_context_from, context_from

__all__ = ["aivax_context_from", "context_from", "middleware"]


def middleware(verifier: Verifier | AivaxVerifier, **options: Any) -> Any:
    """A Starlette ``Middleware`` entry for ``FastMCP.http_app(middleware=[...])``."""
    from starlette.middleware import Middleware

    return Middleware(ToolctxMiddleware, verifier=verifier, **options)
