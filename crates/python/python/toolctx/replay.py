"""The replay guard's shared store in Redis, for several replicas.

``Verifier(..., replay=RedisReplayStore(redis.Redis(...)))``: each token id
is one key, written with the core's command (``SET <prefix><jti> 1 NX PX
<ms>``, the one every toolctx front end sends: atomic, one replica wins,
expiring when its token could no longer be accepted anyway). The core calls
``first_use`` from inside its guard, reads Redis's reply
(``redis_claim_answer``: ``OK`` a first use, nil a replay, anything else
``FAILED``) and says what the answer means; a Redis error refuses the call
(``internal_error``), never lets it through.

A custom store answers a ``ClaimAnswer`` (``FIRST_USE``, ``USED``, ``FULL``
when it cannot record more, ``FAILED``), or a bool as before (``True``
first use, ``False`` used).

Needs ``redis-py`` (``pip install toolctx[redis]``), a synchronous client:
an ASGI server runs the verifier in a worker thread when a shared store is
configured, so the event loop never waits on Redis. Bound its commands by
the core's store timeout (``REDIS_TIMEOUT_MS``): ``RedisReplayStore.from_url``
does; a command is sent once, never retried.
"""

from __future__ import annotations

from typing import Any

from toolctx._native import REDIS_KEY_PREFIX, REDIS_TIMEOUT_MS, ClaimAnswer, redis_claim_answer, redis_claim_args


class RedisReplayStore:
    """Token ids in Redis under ``prefix`` (default ``toolctx:jti:``)."""

    def __init__(self, client: Any, *, prefix: str = REDIS_KEY_PREFIX) -> None:
        if not hasattr(client, "execute_command"):
            raise TypeError("RedisReplayStore needs a redis-py client (redis.Redis)")
        self._client = client
        self._prefix = prefix

    @classmethod
    def from_url(cls, url: str, *, prefix: str = REDIS_KEY_PREFIX) -> RedisReplayStore:
        """A store on a new ``redis.Redis`` client for ``url`` whose connects
        and replies are bounded by the core's store timeout, never retried."""
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        timeout = REDIS_TIMEOUT_MS / 1000
        # redis-py retries a timed-out command by default: a claim is sent once.
        client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 0))
        return cls(client, prefix=prefix)

    def first_use(self, jti: str, until: int, now: int) -> ClaimAnswer:
        """Records ``jti`` until ``until`` (Unix seconds); the core's reading
        of Redis's reply. A connection error or timeout raises (the core
        refuses the call ``internal_error`` and the error is logged)."""
        return redis_claim_answer(self._client.execute_command(*redis_claim_args(self._prefix, jti, until, now)))

    def __repr__(self) -> str:
        return f"RedisReplayStore(prefix={self._prefix!r})"
