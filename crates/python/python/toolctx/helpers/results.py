"""Tool results and the platform's limits on them (CONTRACT §5): text over
8000 characters is offloaded (the model sees a pointer and a preview),
``structuredContent`` over 16000 characters of JSON is dropped, images are
PNG, JPEG, GIF or WebP up to 5 MB and at most 8 per result. The platform
applies these silently; these helpers say so while you develop. The numbers
and codes are the npm package's (``npm/src/results.ts``).
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypedDict

from toolctx.helpers.errors import helper_error

log = logging.getLogger("toolctx")

class Limits(TypedDict):
    text_chars: int
    structured_chars: int
    image_bytes: int
    images: int
    image_types: tuple[str, ...]


LIMITS: Limits = {
    "text_chars": 8000,
    "structured_chars": 16000,
    "image_bytes": 5 * 1024 * 1024,
    "images": 8,
    "image_types": ("image/png", "image/jpeg", "image/gif", "image/webp"),
}


#: The findings' codes (the npm package's ``LimitCode``; tests/python/test_mirrors.py compares them).
LIMIT_CODES = ("text_offloaded", "structured_dropped", "image_type", "image_too_large", "too_many_images")


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


def _field(obj: Any, *names: str) -> Any:
    for name in names:
        if isinstance(obj, dict):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
    return None


def _b64_bytes(data: str) -> int:
    return len(data.rstrip("=")) * 3 // 4


def check_result(result: Any) -> list[LimitFinding]:
    """The limits ``result`` (a ``CallToolResult``, or its dict form) runs
    into; empty when it is within all of them."""
    findings = []
    text_chars = 0
    images = 0
    for index, block in enumerate(_field(result, "content") or []):
        kind = _field(block, "type")
        if kind == "text" and isinstance(_field(block, "text"), str):
            text_chars += len(_field(block, "text"))
            continue
        if kind == "image":
            mime, data = _field(block, "mimeType", "mime_type"), _field(block, "data")
        elif kind == "resource":
            resource = _field(block, "resource")
            mime, data = _field(resource, "mimeType", "mime_type"), _field(resource, "blob")
            if not (isinstance(data, str) and isinstance(mime, str) and mime.startswith("image/")):
                continue
        else:
            continue
        images += 1
        if mime not in LIMITS["image_types"]:
            findings.append(
                LimitFinding(
                    "image_type",
                    f"image {index} is {mime or 'untyped'}: only PNG, JPEG, GIF and WebP images are kept",
                    0,
                    0,
                    index,
                )
            )
        size = _b64_bytes(data if isinstance(data, str) else "")
        if size > LIMITS["image_bytes"]:
            findings.append(
                LimitFinding(
                    "image_too_large",
                    f"image {index} is {size} bytes, over the {LIMITS['image_bytes']}-byte limit",
                    size,
                    LIMITS["image_bytes"],
                    index,
                )
            )
    if text_chars > LIMITS["text_chars"]:
        findings.append(
            LimitFinding(
                "text_offloaded",
                f"the result's text is {text_chars} characters: over {LIMITS['text_chars']} the platform "
                "offloads it and the model sees a pointer and a preview",
                text_chars,
                LIMITS["text_chars"],
            )
        )
    if images > LIMITS["images"]:
        findings.append(
            LimitFinding(
                "too_many_images", f"the result has {images} images, more than {LIMITS['images']}", images, LIMITS["images"]
            )
        )
    structured = _field(result, "structuredContent", "structured_content")
    if structured is not None:
        chars = len(json.dumps(structured, ensure_ascii=False, separators=(",", ":")))
        if chars > LIMITS["structured_chars"]:
            findings.append(
                LimitFinding(
                    "structured_dropped",
                    f"structuredContent is {chars} characters of JSON: over {LIMITS['structured_chars']} the platform drops it",
                    chars,
                    LIMITS["structured_chars"],
                )
            )
    return findings


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
