"""The replay guard's shared store in Redis, for several replicas.

``Verifier(..., replay=RedisReplayStore(redis.Redis(...)))``: each token id
is one key, set with ``SET key 1 NX PX ms`` (atomic: one replica wins) and
expiring when its token could no longer be accepted anyway. The core calls
``first_use`` from inside its guard; a Redis error refuses the call
(``internal_error``), never lets it through.

Needs ``redis-py`` (``pip install toolctx[redis]``), a synchronous client:
an ASGI server runs the verifier in a worker thread when a shared store is
configured, so the event loop never waits on Redis.
"""

from __future__ import annotations

from typing import Any


class RedisReplayStore:
    """Token ids in Redis under ``prefix`` (default ``toolctx:jti:``)."""

    def __init__(self, client: Any, *, prefix: str = "toolctx:jti:") -> None:
        if not hasattr(client, "set"):
            raise TypeError("RedisReplayStore needs a redis-py client (redis.Redis)")
        self._client = client
        self._prefix = prefix

    def first_use(self, jti: str, until: int, now: int) -> bool:
        """Records ``jti`` until ``until`` (Unix seconds); whether it was unused."""
        ms = max(1, until - now) * 1000
        return self._client.set(self._prefix + jti, "1", nx=True, px=ms) is True

    def __repr__(self) -> str:
        return f"RedisReplayStore(prefix={self._prefix!r})"
