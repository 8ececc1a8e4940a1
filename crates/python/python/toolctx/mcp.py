"""The official MCP SDK (``mcp``): its Streamable HTTP app behind the
middleware, and the context in a tool.

::

    from mcp.server.mcpserver import Context, MCPServer
    import toolctx
    from toolctx.mcp import protect

    server = MCPServer("orders")

    @server.tool()
    async def get_order(order_id: str, ctx: Context) -> str:
        context = toolctx.context_from(ctx)  # ctx.request_context.request.scope
        return f"order {order_id} for task {context.task_id}"

    app = protect(server.streamable_http_app(stateless_http=True), toolctx.Verifier(instance_id, [secret]))

``context_from(ctx)`` reads the context the middleware put in the scope of
the HTTP request the SDK hands every handler (``ctx.request_context.request``
for ``MCPServer`` tools; the lowlevel ``ServerRequestContext.request``).
"""

from __future__ import annotations

from typing import Any

from toolctx._native import AivaxVerifier, Verifier
from toolctx.asgi import ASGIApp, ToolctxMiddleware
from toolctx.context import aivax_context_from, context_from

__all__ = ["aivax_context_from", "context_from", "protect"]


def protect(app: ASGIApp, verifier: Verifier | AivaxVerifier, **options: Any) -> ToolctxMiddleware:
    """``app`` (the SDK's ``streamable_http_app()``, or any ASGI app) behind
    ``ToolctxMiddleware`` with ``verifier``; ``options`` as the middleware's."""
    return ToolctxMiddleware(app, verifier, **options)
