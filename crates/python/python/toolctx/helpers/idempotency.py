"""Idempotent tools (CONTRACT §5): a retry carries the same idempotency key
and arguments with a new token. The first call's result is stored under the
verified key; a retry gets it back, exactly as first sent (its ``_meta``
included) with ``_meta["agentarea/replayed"] = True``, without the tool
running again. The same key with other arguments is a conflict, never a
replay; a key whose first call still runs is not run twice. Every rule
(store key, argument hash, entry encoding and validation, conflict, wait
and replay, refusals, Redis commands and replies, defaults) is the core's
(``toolctx_core::helpers::idempotency``, through ``toolctx._native``),
shared with the npm package and toolctx-tower; this module runs the loop
and the stores' I/O.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Literal, ParamSpec, Protocol, TypeAlias, TypedDict, TypeVar, Union, cast, overload

import anyio

from toolctx import _native
from toolctx._native import ToolctxError
from toolctx.context import _scope_of, context_from, current_context
from toolctx.helpers.errors import helper_error

#: The ``_meta`` key the platform reads on a replayed result.
REPLAYED = _native.IDEMPOTENCY_REPLAYED
#: The ``_meta`` key naming why the helper refused a call.
OUTCOME_KEY = _native.IDEMPOTENCY_OUTCOME_KEY

log = logging.getLogger("toolctx")

#: The core's defaults, in seconds: results kept 24 h, claims leased 30 min,
#: a duplicate waits 60 s; a Redis command's reply awaited 500 ms (the core's).
DAY_S = _native.IDEMPOTENCY_TTL_MS / 1000
LEASE_S = _native.IDEMPOTENCY_LEASE_MS / 1000
WAIT_S = _native.IDEMPOTENCY_WAIT_MS / 1000
TIMEOUT_S = _native.IDEMPOTENCY_STORE_TIMEOUT_MS / 1000

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

#: Why a call was refused (the core's outcomes): the same key with other
#: arguments, the first call still running after ``wait_s``, no verified context.
OUTCOMES: tuple[Outcome, ...] = cast("tuple[Outcome, ...]", tuple(_native.IDEMPOTENCY_OUTCOMES))


def store_key(namespace: str, key: str) -> str:
    """The store key of an idempotency key in a namespace (the core's):
    the namespace with ``%`` and ``:`` percent-escaped (``%25``, ``%3A``),
    then ``:``, then the key, so two namespaces never share a store key
    (``"a"`` + ``"b:c"`` is ``a:b:c``, ``"a:b"`` + ``"c"`` is ``a%3Ab:c``)."""
    return _native.idempotency_store_key(namespace, key)


def canonical_hash(value: Any) -> str:
    """Lowercase hex SHA-256 of the RFC 8785 form (the core's argument hash)."""
    return _native.idempotency_argument_hash(value)


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


def _entry_text(value: object) -> str | bytes:
    """What a store handed back, as the text the core reads: as it is when
    it is text, else its JSON (an entry dict of a custom store)."""
    if isinstance(value, (str, bytes)):
        return value
    try:
        return json.dumps(value)
    except (TypeError, ValueError):  # not JSON at all: not an entry
        return b""


def check_entry(value: object) -> Entry:
    """``value`` as a store's entry, or ``ToolctxError``
    (``idempotency_entry_invalid``), by the core's reading: a key holding
    something toolctx did not write (another program's value, a truncated
    write) is never replayed or taken for a running call."""
    return decode_entry(_entry_text(value))


def encode_entry(entry: Entry) -> str:
    """An entry as stored (the core's encoding: compact JSON, members in a
    fixed order, so that ``release`` can compare the exact text ``claim``
    wrote)."""
    if entry["state"] == "running":
        return _native.idempotency_running(entry["hash"], entry["owner"])
    return _native.idempotency_done(entry["hash"], json.dumps(entry["result"]))


def decode_entry(raw: str | bytes) -> Entry:
    """What a store holds as an entry (the core's reading); anything else
    is ``idempotency_entry_invalid``."""
    state, digest, rest = _native.idempotency_read_entry(raw)
    if state == "running":
        return {"state": "running", "hash": digest, "owner": rest}
    return {"state": "done", "hash": digest, "result": json.loads(rest)}


class MemoryIdempotencyStore:
    """The in-memory store, for a server with one process (several replicas:
    ``RedisIdempotencyStore``): the core's (``toolctx_core::helpers::memory``
    through ``toolctx._native``, shared with the npm package and
    toolctx-tower). Expiry, capacity (the least recently used leaves first;
    ``max_entries`` read by the core's settings table, ``None`` or 0 its
    default, anything out of range ``ConfigError``) and the release rule
    (only while the key holds exactly the caller's claim) are the core's.
    Entries are kept as their JSON text, as in Redis: a replay is the result
    as it was sent, whatever became of the object since. ``clock`` is in
    seconds and only moves forward."""

    def __init__(self, max_entries: int | None = None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._store = _native.IdempotencyMemoryStore(max_entries)
        self._clock = clock

    def __len__(self) -> int:
        return len(self._store)

    async def claim(self, key: str, entry: RunningEntry, lease_s: float) -> Entry | None:
        held = self._store.claim(key, encode_entry(entry), _ms(lease_s), _ms(self._clock()))
        return None if held is None else decode_entry(held)

    async def complete(self, key: str, entry: DoneEntry, ttl_s: float) -> None:
        self._store.complete(key, encode_entry(entry), _ms(ttl_s), _ms(self._clock()))

    async def release(self, key: str, entry: RunningEntry) -> None:
        self._store.release(key, encode_entry(entry), _ms(self._clock()))


class AsyncRedis(Protocol):
    """The call ``RedisIdempotencyStore`` makes: a ``redis.asyncio`` client has it."""

    def execute_command(self, *args: str) -> Awaitable[object]: ...


_Command: TypeAlias = Literal["claim", "read", "complete", "release"]


class RedisIdempotencyStore:
    """Results in Redis, for several replicas, with the core's keys,
    commands and reply meanings (shared with the npm package and
    toolctx-tower): the claim is one ``SET key value NX PX lease``
    (atomic), the result a ``SET key value PX ttl``, the release the core's
    compare-and-delete script. A command that fails, takes longer than
    ``timeout_s`` or answers what the core does not recognise fails the
    call (it never runs unguarded); the core reads ``timeout_s`` (0 its
    default, 0.5 s; else whole milliseconds from 0.001 to 60 s, or
    ``ConfigError``, ``limit_out_of_range``). ``client`` is a
    ``redis.asyncio`` client (``pip install toolctx[redis]``)."""

    def __init__(
        self, client: AsyncRedis, *, prefix: str = _native.IDEMPOTENCY_KEY_PREFIX, timeout_s: float = TIMEOUT_S
    ) -> None:
        self._client = client
        self._prefix = prefix
        self._timeout_s = _native.redis_timeout_ms(timeout_s * 1000) / 1000

    async def _send(self, command: _Command, args: list[str]) -> tuple[str, bytes | None]:
        """Sends ``args``; the reply as the core means it for ``command``."""
        try:
            with anyio.fail_after(self._timeout_s):
                reply = await self._client.execute_command(*args)
        except TimeoutError:
            raise RuntimeError(f"toolctx: redis: no reply within {self._timeout_s} s ({args[0]})") from None
        except Exception as e:  # an error reply, or the client's: the core reads it as one
            reply = e
        return _native.idempotency_redis_meaning(command, reply)

    def _failed(self, command: _Command, meaning: str) -> RuntimeError:
        return RuntimeError(f"toolctx: redis answered {command} with a reply that means {meaning}")

    async def claim(self, key: str, entry: RunningEntry, lease_s: float) -> Entry | None:
        k = _native.idempotency_redis_key(self._prefix, key)
        value = encode_entry(entry)
        # The held value can expire between the SET and the GET: try again.
        for _ in range(_native.IDEMPOTENCY_CLAIM_ROUNDS):
            meaning, _held = await self._send("claim", _native.idempotency_redis_claim_args(k, value, _ms(lease_s)))
            if meaning == "claimed":
                return None
            if meaning != "taken":
                raise self._failed("claim", meaning)
            meaning, held = await self._send("read", _native.idempotency_redis_read_args(k))
            if meaning == "held" and held is not None:
                return decode_entry(held)
            if meaning != "gone":
                raise self._failed("read", meaning)
        raise RuntimeError("toolctx: could not claim or read the key")

    async def complete(self, key: str, entry: DoneEntry, ttl_s: float) -> None:
        k = _native.idempotency_redis_key(self._prefix, key)
        meaning, _ = await self._send("complete", _native.idempotency_redis_complete_args(k, encode_entry(entry), _ms(ttl_s)))
        if meaning != "stored":
            raise self._failed("complete", meaning)

    async def release(self, key: str, entry: RunningEntry) -> None:
        k = _native.idempotency_redis_key(self._prefix, key)
        meaning, _ = await self._send("release", _native.idempotency_redis_release_args(k, encode_entry(entry)))
        if meaning not in ("released", "not_held"):
            raise self._failed("release", meaning)

    def __repr__(self) -> str:
        return f"RedisIdempotencyStore(prefix={self._prefix!r})"


def _setting_ms(name: str, seconds: float) -> float:
    """A duration setting in seconds, read by the core's table in ms."""
    ms = _native.read_setting(name, seconds * 1000)
    assert isinstance(ms, int)
    return ms / 1000


def _ms(seconds: float) -> int:
    """Seconds as whole milliseconds (the core writes at least 1)."""
    return max(0, int(seconds * 1000))


def _refusal(outcome: Outcome, key: str) -> ResultDict:
    """The core's default refusal (raises ``invalid_argument`` for an
    unknown outcome)."""
    result: ResultDict = json.loads(_native.idempotency_refusal(outcome, key))
    return result


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


def _revision(source: Any) -> str:
    """The call's protocol revision as the SDK read it (the request's own,
    else the session's negotiated one: the ``mcp`` SDK's
    ``Context.protocol_version``, or its ``request_context``'s), else the
    HTTP request's ``MCP-Protocol-Version`` header, or ``""`` when none is
    known: the core writes the replay for it."""
    holders = [source]
    try:
        holders.append(getattr(source, "request_context", None))
    except Exception:  # a Context outside a request: nothing to read
        pass
    for holder in holders:
        try:
            version = getattr(holder, "protocol_version", None)
        except Exception:
            version = None
        if isinstance(version, str):
            return version
    scope = _scope_of(source) if source is not None else None
    for name, value in (scope or {}).get("headers", []):
        if isinstance(name, bytes) and name.lower() == b"mcp-protocol-version" and isinstance(value, bytes):
            return value.decode("latin-1")
    return ""


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
    lease_s: float = LEASE_S,
    wait_s: float = WAIT_S,
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
    lease_s: float = LEASE_S,
    wait_s: float = WAIT_S,
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

    # Read by the core's settings table (0 its default, a negative or
    # out-of-range number refused ``limit_out_of_range``), in seconds again.
    ttl_s, lease_s, wait_s = (
        _setting_ms("idempotency_ttl_ms", ttl_s),
        _setting_ms("idempotency_lease_ms", lease_s),
        _setting_ms("idempotency_wait_ms", wait_s),
    )

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

        async def claim(key: str, mine: RunningEntry) -> str | bytes | None:
            """``None`` (claimed) or what the key holds, as text for the core."""
            try:
                held = await the_store.claim(key, mine, lease_s)
            except ToolctxError:
                raise
            except Exception as e:
                raise helper_error(
                    "idempotency_store_failed", f"idempotent: the store failed, the tool did not run: {e!r}"
                ) from e
            return None if held is None else _entry_text(held)

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
            start, deadline_ms, rounds = clock(), _ms(wait_s), 0
            while True:
                held = await claim(key, mine)
                if held is None:
                    break
                # The core decides: a conflict, the replay, or wait and claim again.
                decision, replay = _native.idempotency_held(held, digest, _revision(source))
                if decision == "conflict":
                    return answer("conflict", context.idempotency_key)
                if replay is not None:
                    return _to_sdk(json.loads(replay))
                pause_ms = _native.idempotency_wait(_ms(clock() - start), deadline_ms, rounds)
                if pause_ms is None:
                    return answer("in_progress", context.idempotency_key)
                await anyio.sleep(pause_ms / 1000)
                rounds += 1
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
