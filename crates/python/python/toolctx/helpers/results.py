"""Tool results and the platform's limits on them (CONTRACT §5): text over
8000 characters is offloaded (the model sees a pointer and a preview),
``structuredContent`` over 16000 characters of JSON is dropped, images are
PNG, JPEG, GIF or WebP up to 5 MB and at most 8 per result. The platform
applies these silently; these helpers say so while you develop. The limits,
how each is measured and the findings are the core's
(``toolctx_core::helpers::results``, through ``toolctx._native``).
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolctx import _native
from toolctx.helpers.errors import helper_error

if TYPE_CHECKING:
    from toolctx._native import ResultLimits as Limits

log = logging.getLogger("toolctx")

#: The core's limits: ``text_chars``, ``structured_chars``, ``image_bytes``, ``images``, ``image_types``.
LIMITS: Limits = _native.RESULT_LIMITS

#: The findings' codes (the core's ``LimitCode``).
LIMIT_CODES: tuple[str, ...] = _native.LIMIT_CODES


@dataclass(frozen=True)
class LimitFinding:
    """One limit a result runs into: ``code`` is ``text_offloaded``,
    ``structured_dropped``, ``image_type``, ``image_too_large`` or
    ``too_many_images``."""

    code: str
    message: str
    size: int
    limit: int
    index: int | None = None

    def __post_init__(self) -> None:
        if self.code not in LIMIT_CODES:
            raise helper_error("invalid_argument", f"unknown limit code {self.code!r}")


def _plain(value: Any) -> Any:
    """The JSON form of a result: pydantic models (the ``mcp`` SDK's
    ``CallToolResult`` and content blocks) as they are sent, by alias."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def check_result(result: Any) -> list[LimitFinding]:
    """The limits ``result`` (a ``CallToolResult``, or its dict form) runs
    into; empty when it is within all of them. A result that is not JSON
    the platform reads raises ``ToolctxError`` (``invalid_argument``)."""
    return [LimitFinding(*f) for f in _native.check_result(_plain(result))]


def warn_in_development(finding: LimitFinding) -> None:
    """The default hook: a warning unless ``TOOLCTX_ENV=production``."""
    if os.environ.get("TOOLCTX_ENV") == "production":
        return
    log.warning("toolctx: %s", finding.message)


def checked(result: Any, on_limit: Callable[[LimitFinding], None] = warn_in_development) -> Any:
    """Reports each finding of ``check_result`` to ``on_limit`` (raise from it
    to make a test fail on any limit); returns ``result`` unchanged."""
    for finding in check_result(result):
        on_limit(finding)
    return result


def with_limits(
    tool: Callable[..., Awaitable[Any]] | None = None,
    *,
    on_limit: Callable[[LimitFinding], None] = warn_in_development,
) -> Any:
    """Wraps an ``async`` tool so that every result it returns is checked."""

    def wrap(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        @functools.wraps(fn)
        async def limited(*args: Any, **kwargs: Any) -> Any:
            return checked(await fn(*args, **kwargs), on_limit)

        return limited

    return wrap(tool) if tool is not None else wrap
