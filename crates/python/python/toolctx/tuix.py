"""The Tuix upstream headers (CONTRACT §7): verified ``_meta`` values
forwarded as headers (``sessionId`` -> ``X-Session-Id``,
``idempotencyKey`` -> ``X-Idempotency-Key``). The core decides them: turn
them on with ``Verifier(..., forward={"tuix": True})``; the verdict's
``upstream`` lists what to remove and to add, and ``ToolctxMiddleware``
applies it.
"""

from __future__ import annotations

from collections.abc import Mapping

from toolctx._native import TUIX_HEADERS as _PAIRS

#: The Tuix upstream headers by the ``_meta`` member they carry
#: (lower-case header names), from the core.
TUIX_HEADERS: Mapping[str, str] = dict(_PAIRS)
