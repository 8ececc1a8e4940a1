"""Where the verified context goes once the middleware accepted a call, and
how a tool reaches it: the ASGI scope (``scope["state"]["toolctx"]``), a
context variable for the request's task, and ``context_from(obj)`` over a
request, a scope, or an MCP tool's context object.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from toolctx._native import AivaxContext, Context

#: The scope key (under ``scope["state"]``) the ASGI middleware writes.
SCOPE_KEY = "toolctx"
AIVAX_SCOPE_KEY = "toolctx.aivax"

_current: ContextVar[Context | None] = ContextVar("toolctx_context", default=None)
_current_aivax: ContextVar[AivaxContext | None] = ContextVar("toolctx_aivax_context", default=None)


def current_context() -> Context | None:
    """The verified context of the request being handled in this task, or ``None``."""
    return _current.get()


def current_aivax_context() -> AivaxContext | None:
    return _current_aivax.get()


def _scope_of(source: Any) -> Any:
    """The ASGI scope behind ``source``: a scope, a Starlette request, or an
    MCP tool context (SDK ``Context``, FastMCP ``Context``, a
    ``RequestContext``) whose request is a Starlette request."""
    if isinstance(source, dict) and "type" in source:
        return source
    scope = getattr(source, "scope", None)
    if isinstance(scope, dict):
        return scope
    # mcp.server.fastmcp / mcp.server.mcpserver Context -> request_context -> request
    for path in (("request_context", "request"), ("request",)):
        obj = source
        for attr in path:
            try:
                obj = getattr(obj, attr)
            except Exception:  # a property that raises outside a request
                obj = None
            if obj is None:
                break
        scope = getattr(obj, "scope", None) if obj is not None else None
        if isinstance(scope, dict):
            return scope
    # FastMCP outside its request context (middleware hooks): its own lookup.
    if type(source).__module__.startswith("fastmcp"):
        try:
            from fastmcp.server.dependencies import get_http_request

            scope = getattr(get_http_request(), "scope", None)
        except (ImportError, RuntimeError):
            scope = None
        if isinstance(scope, dict):
            return scope
    return None


def _find(source: Any, key: str) -> Any:
    if source is None:
        raise TypeError("context_from needs a request, an ASGI scope or a tool's context object, not None")
    scope = _scope_of(source)
    if scope is None:
        raise TypeError(f"context_from cannot find the HTTP request behind {type(source).__name__}")
    state = scope.get("state")
    return state.get(key) if isinstance(state, dict) else None


def context_from(source: Any) -> Context | None:
    """The verified ``Context`` of the call ``source`` belongs to, or ``None``
    when the call carried none (``require_context=False`` let it pass).
    ``source`` is an ASGI scope, a Starlette request, or an MCP tool's context
    (``mcp`` SDK ``Context``, FastMCP ``Context``); anything else raises
    ``TypeError`` rather than reading as "no context"."""
    found = _find(source, SCOPE_KEY)
    return found if isinstance(found, Context) else None


def aivax_context_from(source: Any) -> AivaxContext | None:
    """The ``AivaxContext`` of a call accepted by an ``AivaxVerifier``."""
    found = _find(source, AIVAX_SCOPE_KEY)
    return found if isinstance(found, AivaxContext) else None
