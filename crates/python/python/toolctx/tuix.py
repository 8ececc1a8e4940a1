"""The Tuix upstream headers (CONTRACT §7): verified ``_meta`` values
forwarded as headers (``sessionId`` -> ``X-Session-Id``,
``idempotencyKey`` -> ``X-Idempotency-Key``); a request arriving with one
of them already set has it removed first, so a caller cannot spoof it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

#: The Tuix upstream headers and the ``_meta`` members they carry.
TUIX_HEADERS: Mapping[str, str] = {"sessionId": "X-Session-Id", "idempotencyKey": "X-Idempotency-Key"}

_NAMES = frozenset(n.lower() for n in TUIX_HEADERS.values())
# Printable ASCII without leading or trailing space: forwarded as is by every HTTP stack.
_VALUE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?\Z")


def tuix_headers(message: Any) -> dict[str, str]:
    """The Tuix headers of an accepted call: ``message`` is the JSON-RPC
    request (a dict with ``params._meta``) or a ``_meta`` dict. A member that
    is missing, not a string or not printable ASCII gives no header."""
    if not isinstance(message, Mapping):
        return {}
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, Mapping) else message
    if not isinstance(meta, Mapping):
        return {}
    out = {}
    for member, header in TUIX_HEADERS.items():
        value = meta.get(member)
        if isinstance(value, str) and _VALUE.match(value):
            out[header] = value
    return out


def without_tuix_headers(
    headers: Iterable[tuple[bytes, bytes]], set_headers: Mapping[str, str] | None = None
) -> list[tuple[bytes, bytes]]:
    """ASGI headers without the Tuix headers; with ``set_headers``, those added."""
    out = [(n, v) for n, v in headers if n.decode("latin-1").lower() not in _NAMES]
    for name, value in (set_headers or {}).items():
        out.append((name.lower().encode("latin-1"), value.encode("latin-1")))
    return out
