"""The errors the server helpers raise: a ``toolctx.ToolctxError`` whose
``code`` is one of ``HELPER_ERROR_CODES`` (the npm package's codes for the
same failures; tests/python/test_mirrors.py compares them)."""

from __future__ import annotations

from typing import Literal

from toolctx._native import ToolctxError

HelperErrorCode = Literal["invalid_argument", "idempotency_store_failed", "idempotency_entry_invalid"]

#: ``invalid_argument``: a helper got something it cannot use (a tool that
#: is not ``async``, an object without ``report_progress``);
#: ``idempotency_store_failed``: the store failed before the tool ran (the
#: tool did not run; ``__cause__`` is the store's error);
#: ``idempotency_entry_invalid``: the store holds something under the key
#: that is not an idempotency entry (the tool did not run).
HELPER_ERROR_CODES: tuple[HelperErrorCode, ...] = (
    "invalid_argument",
    "idempotency_store_failed",
    "idempotency_entry_invalid",
)


def helper_error(code: HelperErrorCode, message: str) -> ToolctxError:
    """A ``ToolctxError`` with ``code`` set, as the native module raises them."""
    error = ToolctxError(message)
    error.code = code
    return error
