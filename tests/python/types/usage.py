"""A usage file for the type stubs (mypy --strict over it, in
scripts/test-python): the public API as a server and a platform use it."""

from __future__ import annotations

import toolctx
from toolctx.asgi import ToolctxMiddleware
from toolctx.helpers import LIMITS, Progress, check_result


def verify(v: toolctx.Verifier, body: bytes) -> str:
    verdict = v.verify("POST", [("x-agentarea-context", "t")], body, now=1_767_225_600)
    if isinstance(verdict, toolctx.Accept):
        context = verdict.context
        assert isinstance(context, toolctx.Context)
        key: str = context.idempotency_key
        exp: int = context.exp
        return f"{key} {exp} {context.end_user_id or ''}"
    if isinstance(verdict, toolctx.Reject):
        status: int = verdict.status
        reason: toolctx.Reason = verdict.reason
        return f"{status} {reason} {verdict.body}"
    return verdict.outcome


def headers_first(v: toolctx.Verifier, body: bytes) -> str:
    first = v.check_headers("POST", {"authorization": "Bearer k"})
    if isinstance(first, toolctx.ReadBody):
        return v.verify_body(first, body[: first.max_body_bytes + 1]).outcome
    return first.outcome


def platform(secret: str) -> tuple[str, dict[str, object]]:
    claims = toolctx.Claims(instance_id="i", task_id="t", tool_call_id="c", workspace_id="w", iat=1_767_225_600)
    return claims.mint(secret), claims.meta()


def app(inner: object, v: toolctx.Verifier) -> ToolctxMiddleware:
    codes: tuple[str, ...] = toolctx.config_error_codes()
    report: Progress = Progress(None)
    assert codes and LIMITS["text_chars"] == 8000 and check_result({}) == [] and report.sent == 0
    return ToolctxMiddleware(inner, v)  # type: ignore[arg-type]
