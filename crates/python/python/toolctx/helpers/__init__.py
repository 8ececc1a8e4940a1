"""Server helpers for verified calls (CONTRACT §5), the same rules as the npm
package's ``toolctx/helpers``: idempotent retries (memory and Redis),
progress at the platform's rate, result limits made visible.
"""

from toolctx.helpers.idempotency import (
    OUTCOMES,
    REPLAYED,
    IdempotencyStore,
    MemoryStore,
    RedisStore,
    canonical_hash,
    idempotent,
)
from toolctx.helpers.progress import Progress, progress
from toolctx.helpers.results import LIMIT_CODES, LIMITS, LimitFinding, check_result, checked, warn_in_development, with_limits

__all__ = [
    "LIMITS",
    "LIMIT_CODES",
    "OUTCOMES",
    "REPLAYED",
    "IdempotencyStore",
    "LimitFinding",
    "MemoryStore",
    "Progress",
    "RedisStore",
    "canonical_hash",
    "check_result",
    "checked",
    "idempotent",
    "progress",
    "warn_in_development",
    "with_limits",
]
