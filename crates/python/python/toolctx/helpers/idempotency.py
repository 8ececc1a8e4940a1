"""Idempotent tools (CONTRACT §5): a retry carries the same idempotency key
and arguments with a new token. The first call's result is stored under the
verified key; a retry gets it back, exactly as first sent (its ``_meta``
included) with ``_meta["agentarea/replayed"] = True``, without the tool
running again. The same key with other arguments is a conflict, never a
replay; a key whose first call still runs is not run twice. The rules are
the npm package's (``npm/src/idempotency.ts``).
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
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Literal, ParamSpec, Protocol, TypeAlias, TypedDict, TypeVar, Union, overload

import anyio

from toolctx._native import ToolctxError, canonical_json
from toolctx.context import context_from, current_context
from toolctx.helpers.errors import helper_error

#: The ``_meta`` key the platform reads on a replayed result.
REPLAYED = "agentarea/replayed"
#: The ``_meta`` key naming why the helper refused a call.
OUTCOME_KEY = "toolctx/idempotency"

log = logging.getLogger("toolctx")

DAY_S = 24 * 60 * 60

#: A JSON value, as stored.
Json: TypeAlias = Union[dict[str, "Json"], list["Json"], str, int, float, bool, None]
#: A ``CallToolResult`` as a JSON object (``content``, ``structuredContent``, ``isError``, ``_meta``).
ResultDict: TypeAlias = dict[str, Json]


class RunningEntry(TypedDict):
    """A claim held while the first call runs."""

    state: Literal["running"]
    #: ``canonical_hash`` of the arguments.
    hash: str
    #: Random id of the claiming call, so only it can release the claim.
    owner: str


class DoneEntry(TypedDict):
    """The stored result of a call that finished, as it was sent."""

    state: Literal["done"]
    hash: str
    result: ResultDict


#: A store's entry.
Entry: TypeAlias = Union[RunningEntry, DoneEntry]

Outcome: TypeAlias = Literal["conflict", "in_progress", "unverified"]

#: Why a call was refused (the npm package's ``IdempotencyOutcome``;
#: tests/python/test_mirrors.py compares them): the same key with other
#: arguments, the first call still running after ``wait_s``, no verified context.
OUTCOMES: tuple[Outcome, ...] = ("conflict", "in_progress", "unverified")


def store_key(namespace: str, key: str) -> str:
    """The store key of an idempotency key in a namespace: the namespace
    with ``%`` and ``:`` percent-escaped (``%25``, ``%3A``), then ``:``, then
    the key. The first ``:`` ends the namespace, so two namespaces never
    share a store key (``"a"`` + ``"b:c"`` is ``a:b:c``, ``"a:b"`` + ``"c"``
    is ``a%3Ab:c``). The npm package's ``idempotencyStoreKey`` joins them
    the same way."""
    return namespace.replace("%", "%25").replace(":", "%3A") + ":" + key


def canonical_hash(value: Any) -> str:
    """Lowercase hex SHA-256 of the RFC 8785 form (written by the core)."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


class IdempotencyStore(Protocol):
    """Where results live. ``claim`` must be atomic across every process
    sharing the store."""

    async def claim(self, key: str, entry: RunningEntry, lease_s: float) -> Entry | None:
        """When ``key`` holds nothing live, store ``entry`` for ``lease_s`` and
        return ``None`` (the caller runs the tool); otherwise what it holds."""

    async def complete(self, key: str, entry: DoneEntry, ttl_s: float) -> None:
        """Store the finished call, replacing the claim."""

    async def release(self, key: str, entry: RunningEntry) -> None:
        """Drop the claim ``entry`` only if ``key`` still holds exactly it."""


def check_entry(value: object) -> Entry:
    """``value`` as a store's entry, or ``ToolctxError``
    (``idempotency_entry_invalid``): a key holding something toolctx did not
    write (another program's value, a truncated write) is never replayed or
    taken for a running call."""
    if isinstance(value, dict) and isinstance(value.get("hash"), str):
        if value.get("state") == "running" and isinstance(value.get("owner"), str):
            return {"state": "running", "hash": value["hash"], "owner": value["owner"]}
        if value.get("state") == "done" and isinstance(value.get("result"), dict):
            return {"state": "done", "hash": value["hash"], "result": value["result"]}
    raise helper_error(
        "idempotency_entry_invalid",
        "idempotent: the store holds something under this key that is not an idempotency entry; the tool did not run",
    )


def encode_entry(entry: Entry) -> str:
    """An entry as stored: JSON with a fixed member order, so that
    ``release`` can compare the exact text ``claim`` wrote."""
    if entry["state"] == "running":
        return json.dumps({"state": "running", "hash": entry["hash"], "owner": entry["owner"]})
    return json.dumps({"state": "done", "hash": entry["hash"], "result": entry["result"]})


def decode_entry(raw: str | bytes) -> Entry:
    """What ``encode_entry`` wrote as an entry; anything else is
    ``idempotency_entry_invalid``."""
    try:
        value = json.loads(raw)
    except ValueError:  # not JSON, or bytes that are not UTF-8
        value = None
    return check_entry(value)


class MemoryIdempotencyStore:
    """An in-memory LRU with a TTL per entry, for a server with one process
    (several replicas: ``RedisIdempotencyStore``). Entries are kept as their
    JSON text, as in Redis: a replay is the result as it was sent, whatever
    became of the object since."""

    def __init__(self, max_entries: int = 10_000, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._max = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[str, float]] = OrderedDict()

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
        return decode_entry(slot[0])

    def _put(self, key: str, entry: Entry, seconds: float) -> None:
        self._entries[key] = (encode_entry(entry), self._clock() + seconds)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    async def claim(self, key: str, entry: RunningEntry, lease_s: float) -> Entry | None:
        held = self._live(key)
        if held is not None:
            return held
        self._put(key, entry, lease_s)
        return None

    async def complete(self, key: str, entry: DoneEntry, ttl_s: float) -> None:
        self._put(key, entry, ttl_s)

    async def release(self, key: str, entry: RunningEntry) -> None:
        held = self._live(key)
        if held is not None and held["state"] == "running" and held["owner"] == entry["owner"]:
            del self._entries[key]


# Deletes the claim only while it is still exactly ours.
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"


class AsyncRedis(Protocol):
    """The calls ``RedisIdempotencyStore`` makes: a ``redis.asyncio`` client has them."""

    def set(self, name: str, value: str, *, nx: bool = ..., px: int | None = ...) -> Awaitable[object]: ...
    def get(self, name: str) -> Awaitable[object]: ...
    def eval(self, script: str, numkeys: int, *keys_and_args: str) -> Awaitable[object]: ...


class RedisIdempotencyStore:
    """Results in Redis, for several replicas: the claim is one ``SET key
    value NX PX lease`` (atomic), the result a ``SET key value PX ttl``, the
    release a compare-and-delete script. ``client`` is a ``redis.asyncio``
    client (``pip install toolctx[redis]``)."""

    def __init__(self, client: AsyncRedis, *, prefix: str = "toolctx:idem:") -> None:
        self._client = client
        self._prefix = prefix

    async def claim(self, key: str, entry: RunningEntry, lease_s: float) -> Entry | None:
        k = self._prefix + key
        value = encode_entry(entry)
        # The held value can expire between the SET and the GET: try again.
        for _ in range(3):
            if await self._client.set(k, value, nx=True, px=max(1, int(lease_s * 1000))):
                return None
            held = await self._client.get(k)
            if held is not None:
                return decode_entry(held) if isinstance(held, (str, bytes)) else check_entry(held)
        raise RuntimeError(f"toolctx: could not claim or read {k}")

    async def complete(self, key: str, entry: DoneEntry, ttl_s: float) -> None:
        await self._client.set(self._prefix + key, encode_entry(entry), px=max(1, int(ttl_s * 1000)))

    async def release(self, key: str, entry: RunningEntry) -> None:
        await self._client.eval(_RELEASE, 1, self._prefix + key, encode_entry(entry))

    def __repr__(self) -> str:
        return f"RedisIdempotencyStore(prefix={self._prefix!r})"


def _refusal(outcome: Outcome, key: str) -> ResultDict:
    if outcome not in OUTCOMES:
        raise helper_error("invalid_argument", f"unknown idempotency outcome {outcome!r}")
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


def _as_result(result: Any) -> ResultDict:
    """A tool's return value as a ``CallToolResult`` dict, the way the
    ``mcp`` SDK converts it. A ``CallToolResult`` (or its dict form) is kept
    as it is; other values get the ``structuredContent`` the SDK derives
    from them (a dict or model as itself, anything else as ``{"result":
    value}``), so that the result satisfies the tool's output schema, and
    their JSON as text."""
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


class _Results:
    """What the SDK sends for a tool's return value, by its own conversion
    of it for the tool function: FastMCP's ``Tool.convert_result`` (which
    adds ``_meta.fastmcp.wrap_result`` to a wrapped value) under FastMCP,
    the ``mcp`` SDK's ``FuncMetadata.convert_result`` under its
    ``MCPServer``, ``_as_result`` elsewhere. The first call answers with
    that, and it is what is stored: a replay is the result as first sent."""

    def __init__(self, fn: Callable[..., Awaitable[Any]]) -> None:
        self._fn = fn
        self._tools: dict[str, Any] = {}

    def _tool(self, sdk: str) -> Any:
        if sdk not in self._tools:
            if sdk == "fastmcp":
                from fastmcp.tools import FunctionTool

                self._tools[sdk] = FunctionTool.from_function(self._fn)
            else:
                from mcp.server.mcpserver.tools import Tool

                self._tools[sdk] = Tool.from_function(self._fn)
        return self._tools[sdk]

    def convert(self, result: Any, source: object) -> tuple[ResultDict, Any]:
        """The result as stored (a ``CallToolResult`` dict) and as answered."""
        module = type(source).__module__
        if module.startswith("fastmcp"):
            sent = self._tool("fastmcp").convert_result(result)
            return self._dump(sent.content, sent.structured_content, sent.is_error, sent.meta), sent
        if module.startswith("mcp."):
            done = self._tool("mcp").fn_metadata.convert_result(result)
            return self._dump(done.content, done.structured_content, done.is_error, done.meta), done
        stored = _as_result(result)
        return stored, _to_sdk(stored)

    @staticmethod
    def _dump(content: Any, structured: Any, is_error: bool, meta: Any) -> ResultDict:
        from mcp.types import CallToolResult

        sent = CallToolResult(
            content=content,
            structured_content=structured,
            is_error=is_error,
            _meta=meta,
        )
        data: ResultDict = sent.model_dump(mode="json", by_alias=True, exclude_none=True)
        return data


def _to_sdk(result: ResultDict) -> Any:
    """A stored result as the SDK's ``CallToolResult`` (both the ``mcp`` SDK
    and FastMCP return one from a tool as it is)."""
    try:
        from mcp.types import CallToolResult
    except ImportError:  # no SDK: the dict itself
        return result
    return CallToolResult.model_validate(result)


def _replayed(result: ResultDict) -> Any:
    """The result as first sent, ``_meta`` and all, with ``_meta["agentarea/replayed"]`` added."""
    meta = result.get("_meta")
    return _to_sdk({**result, "_meta": {**(meta if isinstance(meta, dict) else {}), REPLAYED: True}})


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


P = ParamSpec("P")
R = TypeVar("R")


@overload
def idempotent(tool: Callable[P, Coroutine[Any, Any, R]], /) -> Callable[P, Coroutine[Any, Any, Any]]: ...


@overload
def idempotent(
    *,
    store: IdempotencyStore | None = None,
    ttl_s: float = DAY_S,
    lease_s: float = 30 * 60,
    wait_s: float = 60,
    namespace: str = "",
    allow_unverified: bool = False,
    refuse: Callable[[Outcome, str], object] | None = None,
    on_store_error: Callable[[BaseException], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Callable[[Callable[P, Coroutine[Any, Any, R]]], Callable[P, Coroutine[Any, Any, Any]]]: ...


def idempotent(
    tool: Callable[P, Coroutine[Any, Any, R]] | None = None,
    /,
    *,
    store: IdempotencyStore | None = None,
    ttl_s: float = DAY_S,
    lease_s: float = 30 * 60,
    wait_s: float = 60,
    namespace: str = "",
    allow_unverified: bool = False,
    refuse: Callable[[Outcome, str], object] | None = None,
    on_store_error: Callable[[BaseException], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> (
    Callable[P, Coroutine[Any, Any, Any]]
    | Callable[[Callable[P, Coroutine[Any, Any, R]]], Callable[P, Coroutine[Any, Any, Any]]]
):
    """Wraps an ``async`` tool so that a retry is answered from the store.

    - A call without a verified context has no key: refused (``unverified``;
      the tool does not run) unless ``allow_unverified=True`` runs it unguarded.
    - The first call with a key claims it (under ``store_key(namespace,
      key)``), runs, and stores its result (an ``isError`` one too: the tool
      ran), as the SDK sends it: under FastMCP, FastMCP's own conversion of
      the return value; otherwise the ``mcp`` SDK's. The first call answers
      with that same result. A tool that raises releases the claim, so a
      retry runs again.
    - A duplicate with the same arguments (``canonical_hash``) gets the
      stored result exactly as first sent (its ``_meta`` included) with
      ``_meta["agentarea/replayed"] = True``, or waits up to ``wait_s``
      while the first call runs (then ``in_progress``).
    - A duplicate with other arguments is refused as a ``conflict``.
    - An ``input_required`` result is not stored.
    - The store failing before the tool runs raises ``ToolctxError``
      (``idempotency_store_failed``, or ``idempotency_entry_invalid`` when
      the key holds something that is not an entry) and the tool does not
      run; once the tool ran, a store error goes to ``on_store_error`` and
      the call's outcome stands.

    Refusals are ``isError`` results naming the outcome in
    ``_meta["toolctx/idempotency"]`` (or what ``refuse(outcome, key)``
    returns). The tool's context parameter (the SDK's or FastMCP's
    ``Context``) is found among its arguments and left out of the hash; the
    wrapper keeps the tool's signature, so the SDKs see the same parameters.
    """

    def wrap(fn: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, Coroutine[Any, Any, Any]]:
        if not inspect.iscoroutinefunction(fn):
            raise helper_error("invalid_argument", "idempotent wraps an async tool function")
        the_store: IdempotencyStore = store if store is not None else MemoryIdempotencyStore()
        answer: Callable[[Outcome, str], object] = refuse or (lambda outcome, key: _to_sdk(_refusal(outcome, key)))
        store_failed = on_store_error or (
            lambda e: log.warning("toolctx: the idempotency store failed after the tool ran: %r", e)
        )
        signature = inspect.signature(fn)
        results = _Results(fn)

        async def settle(step: Awaitable[None]) -> None:
            # After the tool ran, a store error is reported, never raised: the call's outcome stands.
            try:
                await step
            except Exception as e:
                try:
                    store_failed(e)
                except Exception:  # a hook that raises changes nothing either
                    pass

        async def claim(key: str, mine: RunningEntry) -> Entry | None:
            try:
                held = await the_store.claim(key, mine, lease_s)
            except ToolctxError:
                raise
            except Exception as e:
                raise helper_error(
                    "idempotency_store_failed", f"idempotent: the store failed, the tool did not run: {e!r}"
                ) from e
            return None if held is None else check_entry(held)

        @functools.wraps(fn)
        async def guarded(*args: P.args, **kwargs: P.kwargs) -> Any:
            bound = signature.bind(*args, **kwargs)
            context, arguments, source = None, {}, None
            for name, value in bound.arguments.items():
                if not _is_context_source(value):
                    arguments[name] = value
                    continue
                # The SDK's or FastMCP's Context: where the verified context is,
                # never part of the arguments' hash.
                source = value if source is None else source
                try:
                    context = context or context_from(value)
                except TypeError:  # a Context without HTTP (stdio): no verified context
                    pass
            if source is None:
                context = current_context()
            if context is None:
                return await fn(*args, **kwargs) if allow_unverified else answer("unverified", "")
            key = store_key(namespace, context.idempotency_key)
            digest = canonical_hash(_jsonable(arguments))
            mine: RunningEntry = {"state": "running", "hash": digest, "owner": str(uuid.uuid4())}
            deadline = clock() + wait_s
            pause = 0.01
            while True:
                held = await claim(key, mine)
                if held is None:
                    break
                if held["hash"] != digest:
                    return answer("conflict", context.idempotency_key)
                if held["state"] == "done":
                    return _replayed(held["result"])
                if clock() >= deadline:
                    return answer("in_progress", context.idempotency_key)
                await anyio.sleep(min(pause, max(0.001, deadline - clock())))
                pause = min(pause * 2, 0.25)
            try:
                result = await fn(*args, **kwargs)
                # The SDK's conversion fails where the SDK's own would: as if the tool had raised.
                converted = None if _is_input_required(result) else results.convert(result, source)
            except BaseException:
                with anyio.CancelScope(shield=True):  # the claim expires with its lease if this fails
                    await settle(the_store.release(key, mine))
                raise
            if converted is None:
                # A round of a multi-round-trip call, not its outcome: the round
                # carrying the client's answers runs the tool. Nothing is stored.
                await settle(the_store.release(key, mine))
                return result
            stored, answered = converted
            await settle(the_store.complete(key, {"state": "done", "hash": digest, "result": stored}, ttl_s))
            return answered

        return guarded

    return wrap(tool) if tool is not None else wrap
