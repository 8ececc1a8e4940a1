"""Server helpers for verified calls (CONTRACT §5), the same rules as the npm
package's ``toolctx/helpers``: idempotent retries (memory and Redis),
progress at the platform's rate, result limits made visible. What they
raise is a ``toolctx.ToolctxError`` with a ``code`` from ``HELPER_ERROR_CODES``.
"""

from toolctx.helpers.errors import HELPER_ERROR_CODES, HelperErrorCode
from toolctx.helpers.idempotency import (
    OUTCOMES,
    REPLAYED,
    DoneEntry,
    Entry,
    IdempotencyStore,
    MemoryIdempotencyStore,
    Outcome,
    RedisIdempotencyStore,
    RunningEntry,
    canonical_hash,
    idempotent,
    store_key,
)
from toolctx.helpers.progress import Progress, progress
from toolctx.helpers.results import LIMIT_CODES, LIMITS, LimitFinding, check_result, checked, warn_in_development, with_limits

__all__ = [
    "HELPER_ERROR_CODES",
    "LIMITS",
    "LIMIT_CODES",
    "OUTCOMES",
    "REPLAYED",
    "DoneEntry",
    "Entry",
    "HelperErrorCode",
    "IdempotencyStore",
    "LimitFinding",
    "MemoryIdempotencyStore",
    "Outcome",
    "Progress",
    "RedisIdempotencyStore",
    "RunningEntry",
    "canonical_hash",
    "check_result",
    "checked",
    "idempotent",
    "progress",
    "store_key",
    "warn_in_development",
    "with_limits",
]
