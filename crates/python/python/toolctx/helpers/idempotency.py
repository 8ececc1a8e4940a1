"""Idempotent tools (CONTRACT §5): a retry carries the same idempotency key
and arguments with a new token. The first call's result is stored under the
verified key; a retry gets it back with ``_meta["agentarea/replayed"] =
True`` without the tool running again. The same key with other arguments is
a conflict, never a replay; a key whose first call still runs is not run
twice. The rules are the npm package's (``npm/src/idempotency.ts``).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio

from toolctx._native import canonical_json
from toolctx.context import context_from, current_context

#: The ``_meta`` key the platform reads on a replayed result.
REPLAYED = "agentarea/replayed"
#: The ``_meta`` key naming why the helper refused a call.
OUTCOME_KEY = "toolctx/idempotency"

log = logging.getLogger("toolctx")

DAY_S = 24 * 60 * 60

#: A store's entry: ``{"state": "running", "hash", "owner"}`` or ``{"state": "done", "hash", "result"}``.
Entry = dict[str, Any]

#: Why a call was refused (the npm package's ``IdempotencyOutcome``;
#: tests/python/test_mirrors.py compares them): the same key with other
#: arguments, the first call still running after ``wait_s``, no verified context.
OUTCOMES = ("conflict", "in_progress", "unverified")


def canonical_hash(value: Any) -> str:
    """Lowercase hex SHA-256 of the RFC 8785 form (written by the core)."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


class IdempotencyStore(Protocol):
    """Where results live. ``claim`` must be atomic across every process
    sharing the store. Entries are dicts: ``{"state": "running", "hash",
    "owner"}`` or ``{"state": "done", "hash", "result"}``."""

    async def claim(self, key: str, entry: Entry, lease_s: float) -> Entry | None:
        """When ``key`` holds nothing live, store ``entry`` for ``lease_s`` and
        return ``None`` (the caller runs the tool); otherwise what it holds."""

    async def complete(self, key: str, entry: Entry, ttl_s: float) -> None:
        """Store the finished call, replacing the claim."""

    async def release(self, key: str, entry: Entry) -> None:
        """Drop the claim ``entry`` only if ``key`` still holds exactly it."""


class MemoryStore:
    """An in-memory LRU with a TTL per entry, for a server with one process
    (several replicas: ``RedisStore``)."""

    def __init__(self, max_entries: int = 10_000, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._max = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[Entry, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def _live(self, key: str) -> Entry | None:
        slot = self._entries.get(key)
        if slot is None:
            return None
        if slot[1] <= self._clock():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return slot[0]

    def _put(self, key: str, entry: Entry, seconds: float) -> None:
        self._entries[key] = (entry, self._clock() + seconds)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    async def claim(self, key: str, entry: Entry, lease_s: float) -> Entry | None:
        held = self._live(key)
        if held is not None:
            return held
        self._put(key, entry, lease_s)
        return None

    async def complete(self, key: str, entry: Entry, ttl_s: float) -> None:
        self._put(key, entry, ttl_s)

    async def release(self, key: str, entry: Entry) -> None:
        held = self._live(key)
        if held is not None and held.get("state") == "running" and held.get("owner") == entry.get("owner"):
            del self._entries[key]


# Deletes the claim only while it is still exactly ours.
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"


def _encode(entry: Entry) -> str:
    # Fixed member order, so that release compares the exact string claim wrote.
    if entry["state"] == "running":
        return json.dumps({"state": "running", "hash": entry["hash"], "owner": entry["owner"]})
    return json.dumps({"state": "done", "hash": entry["hash"], "result": entry["result"]})


def _decode(raw: Any) -> Entry:
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    v = json.loads(text)
    if not isinstance(v, dict) or v.get("state") not in ("running", "done") or not isinstance(v.get("hash"), str):
        raise ValueError("toolctx: the idempotency store holds something else under this key")
    return v


class RedisStore:
    """Results in Redis, for several replicas: the claim is one ``SET key
    value NX PX lease`` (atomic), the result a ``SET key value PX ttl``, the
    release a compare-and-delete script. ``client`` is a ``redis.asyncio``
    client (``pip install toolctx[redis]``)."""

    def __init__(self, client: Any, *, prefix: str = "toolctx:idem:") -> None:
        self._client = client
        self._prefix = prefix

    async def claim(self, key: str, entry: Entry, lease_s: float) -> Entry | None:
        k = self._prefix + key
        value = _encode(entry)
        # The held value can expire between the SET and the GET: try again.
        for _ in range(3):
            if await self._client.set(k, value, nx=True, px=max(1, int(lease_s * 1000))):
                return None
            held = await self._client.get(k)
            if held is not None:
                return _decode(held)
        raise RuntimeError(f"toolctx: could not claim or read {k}")

    async def complete(self, key: str, entry: Entry, ttl_s: float) -> None:
        await self._client.set(self._prefix + key, _encode(entry), px=max(1, int(ttl_s * 1000)))

    async def release(self, key: str, entry: Entry) -> None:
        await self._client.eval(_RELEASE, 1, self._prefix + key, _encode(entry))


def _refusal(outcome: str, key: str) -> Entry:
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown idempotency outcome {outcome!r}")
    if outcome == "conflict":
        text = f"idempotency conflict: key {key} was already used with different arguments"
    elif outcome == "in_progress":
        text = f"call {key} is still running; retry later"
    else:
        text = (
            "refused: this tool is idempotent and the call carries no verified toolctx context, so it "
            "cannot be guarded (is toolctx's middleware in front of the MCP app?)"
        )
    return {"content": [{"type": "text", "text": text}], "isError": True, "_meta": {OUTCOME_KEY: outcome}}


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _as_result(result: Any) -> Entry:
    """A tool's return value as a ``CallToolResult`` dict (what is stored and
    replayed). A ``CallToolResult`` (or its dict form) is kept as it is;
    other values get the ``structuredContent`` the SDKs derive from them (a
    dict or model as itself, anything else as ``{"result": value}``), so that
    the replay satisfies the tool's output schema, and their JSON as text."""
    if hasattr(result, "model_dump"):
        data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        if isinstance(data, dict) and isinstance(data.get("content"), list):
            return data
    elif isinstance(result, dict) and isinstance(result.get("content"), list):
        return {k: _jsonable(v) for k, v in result.items()}
    else:
        data = _jsonable(result)
    text = data if isinstance(data, str) else json.dumps(data)
    structured = data if isinstance(data, dict) else {"result": data}
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured}


def _to_sdk(result: Entry) -> Any:
    """A stored result as the SDK's ``CallToolResult`` (both the ``mcp`` SDK
    and FastMCP return one from a tool as it is)."""
    try:
        from mcp.types import CallToolResult
    except ImportError:  # no SDK: the dict itself
        return result
    return CallToolResult.model_validate(result)


def _replayed(result: Entry) -> Any:
    meta = dict(result.get("_meta") or {})
    meta[REPLAYED] = True
    return _to_sdk({**result, "_meta": meta})


def _is_input_required(result: Any) -> bool:
    kind = result.get("resultType") if isinstance(result, dict) else getattr(result, "result_type", None)
    return kind == "input_required"


# Tool arguments as the SDKs hand them over: never a context source.
_PLAIN = (dict, list, tuple, str, int, float, bool, type(None))


def _is_context_source(value: Any) -> bool:
    """A tool's context parameter (``mcp`` SDK ``Context``, a pydantic model
    with ``request_context``; FastMCP's ``Context``; a Starlette request),
    as opposed to an argument the client sent (JSON values, pydantic models)."""
    if isinstance(value, _PLAIN):
        return False
    return hasattr(type(value), "request_context") or isinstance(getattr(value, "scope", None), dict)


def idempotent(
    tool: Callable[..., Awaitable[Any]] | None = None,
    *,
    store: IdempotencyStore | None = None,
    ttl_s: float = DAY_S,
    lease_s: float = 30 * 60,
    wait_s: float = 60,
    namespace: str = "",
    allow_unverified: bool = False,
    refuse: Callable[[str, str], Any] | None = None,
    on_store_error: Callable[[BaseException], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Any:
    """Wraps an ``async`` tool so that a retry is answered from the store.

    - A call without a verified context has no key: refused (``unverified``;
      the tool does not run) unless ``allow_unverified=True`` runs it unguarded.
    - The first call with a key claims it, runs, and stores its result (an
      ``isError`` one too: the tool ran). A tool that raises releases the
      claim, so a retry runs again.
    - A duplicate with the same arguments (``canonical_hash``) gets the
      stored result with ``_meta["agentarea/replayed"] = True``, or waits up
      to ``wait_s`` while the first call runs (then ``in_progress``).
    - A duplicate with other arguments is refused as a ``conflict``.
    - An ``input_required`` result is not stored.

    Refusals are ``isError`` results naming the outcome in
    ``_meta["toolctx/idempotency"]`` (or what ``refuse(outcome, key)``
    returns). The tool's context parameter (the SDK's or FastMCP's
    ``Context``) is found among its arguments and left out of the hash; the
    wrapper keeps the tool's signature, so the SDKs see the same parameters.
    """

    def wrap(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError("idempotent wraps an async tool function")
        the_store = store if store is not None else MemoryStore()
        answer = refuse or (lambda outcome, key: _to_sdk(_refusal(outcome, key)))
        store_failed = on_store_error or (
            lambda e: log.warning("toolctx: the idempotency store failed to record a result: %r", e)
        )
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        async def guarded(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            context, arguments, found_source = None, {}, False
            for name, value in bound.arguments.items():
                if not _is_context_source(value):
                    arguments[name] = value
                    continue
                # The SDK's or FastMCP's Context: where the verified context is,
                # never part of the arguments' hash.
                try:
                    context = context or context_from(value)
                    found_source = True
                except TypeError:  # a Context without HTTP (stdio): no verified context
                    found_source = True
            if not found_source:
                context = current_context()
            if context is None:
                return await fn(*args, **kwargs) if allow_unverified else answer("unverified", "")
            key = namespace + context.idempotency_key
            digest = canonical_hash(_jsonable(arguments))
            mine = {"state": "running", "hash": digest, "owner": str(uuid.uuid4())}
            deadline = clock() + wait_s
            pause = 0.01
            while True:
                held = await the_store.claim(key, mine, lease_s)
                if held is None:
                    break
                if held.get("hash") != digest:
                    return answer("conflict", context.idempotency_key)
                if held.get("state") == "done":
                    return _replayed(held["result"])
                if clock() >= deadline:
                    return answer("in_progress", context.idempotency_key)
                await anyio.sleep(min(pause, max(0.001, deadline - clock())))
                pause = min(pause * 2, 0.25)
            try:
                result = await fn(*args, **kwargs)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    try:
                        await the_store.release(key, mine)
                    except Exception:  # the claim expires with its lease
                        pass
                raise
            if _is_input_required(result):
                await the_store.release(key, mine)
                return result
            try:
                await the_store.complete(key, {"state": "done", "hash": digest, "result": _as_result(result)}, ttl_s)
            except Exception as e:  # the result is still returned
                store_failed(e)
            return result

        return guarded

    return wrap(tool) if tool is not None else wrap
