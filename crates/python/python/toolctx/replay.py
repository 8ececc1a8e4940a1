"""The replay guard's shared store in Redis, for several replicas.

``Verifier(..., replay=RedisReplayStore(redis.Redis(...)))``: each token id
is one key, written with the core's command (``SET <prefix><jti> 1 NX PX
<ms>``, the one every toolctx front end sends: atomic, one replica wins,
expiring when its token could no longer be accepted anyway). The core calls
``first_use`` from inside its guard and says what the answer means; a Redis
error refuses the call (``internal_error``), never lets it through.

Needs ``redis-py`` (``pip install toolctx[redis]``), a synchronous client:
an ASGI server runs the verifier in a worker thread when a shared store is
configured, so the event loop never waits on Redis.
"""

from __future__ import annotations

from typing import Any

from toolctx._native import REDIS_KEY_PREFIX, redis_claim_args


class RedisReplayStore:
    """Token ids in Redis under ``prefix`` (default ``toolctx:jti:``)."""

    def __init__(self, client: Any, *, prefix: str = REDIS_KEY_PREFIX) -> None:
        if not hasattr(client, "execute_command"):
            raise TypeError("RedisReplayStore needs a redis-py client (redis.Redis)")
        self._client = client
        self._prefix = prefix

    def first_use(self, jti: str, until: int, now: int) -> bool:
        """Records ``jti`` until ``until`` (Unix seconds); whether it was unused."""
        reply = self._client.execute_command(*redis_claim_args(self._prefix, jti, until, now))
        return reply is True or reply in (b"OK", "OK")

    def __repr__(self) -> str:
        return f"RedisReplayStore(prefix={self._prefix!r})"
