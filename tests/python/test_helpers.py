"""The server helpers' rules (the npm package's), with fake clocks where
time matters: idempotency outcomes, progress coalescing, result limits."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import pytest
from conftest import INSTANCE, SECRET, claims

import toolctx
from toolctx import _native
from toolctx.context import _current
from toolctx.helpers import (
    LIMITS,
    REPLAYED,
    MemoryIdempotencyStore,
    Progress,
    canonical_hash,
    check_result,
    checked,
    idempotent,
    store_key,
    with_limits,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def verified(tool_call_id: str = "call-1") -> toolctx.Context:
    return verified_as("task-1", tool_call_id)


@contextmanager
def running_as(ctx: toolctx.Context) -> Iterator[None]:
    """Runs the block as a tool call that ctx's verified request carries."""
    token = _current.set(ctx)
    try:
        yield
    finally:
        _current.reset(token)


async def refusal_of(store: object) -> tuple[toolctx.ToolctxError, list[int]]:
    """The error an idempotent tool on store raises, and its runs."""
    runs: list[int] = []

    @idempotent(store=store)
    async def tool(x: int) -> str:
        runs.append(x)
        return "ran"

    with running_as(verified()), pytest.raises(toolctx.ToolctxError) as e:
        await tool(1)
    return e.value, runs


def verified_as(task_id: str, tool_call_id: str) -> toolctx.Context:
    import json

    c = claims("t", task_id=task_id, tool_call_id=tool_call_id)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "_meta": c.meta()}})
    v = toolctx.Verifier(INSTANCE, [SECRET]).verify("POST", [(toolctx.TOKEN_HEADER, c.mint(SECRET))], body)
    return v.context


async def test_unverified_calls_are_refused_unless_allowed() -> None:
    runs = []

    @idempotent
    async def tool(x: int) -> str:
        runs.append(x)
        return "ran"

    refused = await tool(1)
    assert refused.is_error and refused.meta["toolctx/idempotency"] == "unverified"

    @idempotent(allow_unverified=True)
    async def open_tool(x: int) -> str:
        runs.append(x)
        return "ran"

    assert await open_tool(2) == "ran" and runs == [2]


async def test_a_running_first_call_is_not_run_twice_and_a_raise_releases() -> None:
    started, release = anyio.Event(), anyio.Event()
    runs = []
    store = MemoryIdempotencyStore()

    @idempotent(store=store, wait_s=0.2)
    async def slow(x: int) -> str:
        runs.append(x)
        started.set()
        await release.wait()
        return "done"

    with running_as(verified()):
        results = []
        async with anyio.create_task_group() as tg:
            async def first():
                results.append(await slow(1))

            tg.start_soon(first)
            await started.wait()
            busy = await slow(1)  # waits 0.2 s, then in_progress
            assert busy.meta["toolctx/idempotency"] == "in_progress"
            release.set()
        # The first call answers with the result as stored (and replayed).
        assert [r.structured_content for r in results] == [{"result": "done"}] and runs == [1]

        @idempotent(store=MemoryIdempotencyStore())
        async def flaky(x: int) -> str:
            runs.append(("flaky", x))
            if len(runs) == 2:
                raise RuntimeError("first try fails")
            return "ok"

        with pytest.raises(RuntimeError):
            await flaky(5)
        assert (await flaky(5)).content[0].text == "ok"  # the claim was released: the retry runs


def test_canonical_hash_ignores_member_order() -> None:
    assert canonical_hash({"a": 1, "b": [1, 2]}) == canonical_hash({"b": [1, 2], "a": 1.0})
    assert canonical_hash({"a": 1}) != canonical_hash({"a": 2})


def test_memory_store_is_an_lru_with_ttl() -> None:
    now = [0.0]
    store = MemoryIdempotencyStore(max_entries=2, clock=lambda: now[0])

    async def run():
        assert await store.claim("a", {"state": "running", "hash": "h", "owner": "1"}, 10) is None
        assert (await store.claim("a", {"state": "running", "hash": "h", "owner": "2"}, 10))["owner"] == "1"
        now[0] = 11
        assert await store.claim("a", {"state": "running", "hash": "h", "owner": "3"}, 10) is None
        await store.claim("b", {"state": "running", "hash": "h", "owner": "4"}, 10)
        await store.claim("c", {"state": "running", "hash": "h", "owner": "5"}, 10)
        assert len(store) == 2 and await store.claim("a", {"state": "running", "hash": "x", "owner": "6"}, 10) is None

    anyio.run(run)


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


async def test_progress_coalesces_to_the_interval_and_sends_the_final_at_once() -> None:
    sent = []

    async def send(p, total, message):
        sent.append((p, total, message))

    clock = FakeClock()
    report = Progress(send, clock=clock)
    await report(1, 10)
    clock.t = 0.1
    await report(2, 10)
    await report(2, 10)  # not above the last: ignored
    clock.t = 0.2
    await report(3, 10, "three")
    assert sent == [(1, 10, None)]
    await report.flush()
    assert sent[-1] == (3, 10, "three")
    clock.t = 0.3
    await report(10, 10)  # final: at once, inside the interval
    await report(11, 10)  # after the final: ignored
    assert sent == [(1, 10, None), (3, 10, "three"), (10, 10, None)] and report.sent == 3


def test_progress_interval_is_read_by_the_settings_table() -> None:
    async def send(p, total, message):
        pass

    # 0 is the default (the platform's 500 ms), never "no limit".
    assert _native.ProgressCoalescer(0).report(0, 1.0)[0] == "send"
    for c in (_native.ProgressCoalescer(0), _native.ProgressCoalescer(), Progress(send, interval_s=0)._core):
        c.report(0, 1.0)
        assert c.report(0, 2.0) == ("hold", 500, True)
    for bad in (-0.001, 60.001):
        with pytest.raises(toolctx.ConfigError) as e:
            Progress(send, interval_s=bad)
        assert e.value.code == "limit_out_of_range"
    with pytest.raises(toolctx.ConfigError) as e:
        _native.ProgressCoalescer("500")
    assert e.value.code == "config_type"


async def test_progress_held_back_report_goes_out_at_the_end_of_its_interval() -> None:
    sent = []

    async def send(p, total, message):
        sent.append(p)

    async with anyio.create_task_group() as tg:
        report = Progress(send, interval_s=0.05, task_group=tg)
        await report(1)
        await report(2)
        await report(3)
        assert sent == [1]
        with anyio.fail_after(5):
            while len(sent) < 2:
                await anyio.sleep(0.01)
        assert sent == [1, 3]


def test_progress_needs_a_context() -> None:
    from toolctx.helpers import progress

    with pytest.raises(toolctx.ToolctxError) as e:
        progress(object())
    assert e.value.code == "invalid_argument"


def test_a_sync_tool_is_refused_with_a_code() -> None:
    def sync_tool(x: int) -> str:
        return "no"

    with pytest.raises(toolctx.ToolctxError) as e:
        idempotent(sync_tool)  # type: ignore[arg-type]
    assert e.value.code == "invalid_argument"


def test_limits_are_made_visible() -> None:
    big_image = base64.b64encode(b"\0" * (LIMITS["image_bytes"] + 3)).decode()
    result = {
        "content": [{"type": "text", "text": "x" * 8001}, {"type": "image", "data": big_image, "mimeType": "image/bmp"}]
        + [{"type": "image", "data": "AAAA", "mimeType": "image/png"}] * 8,
        "structuredContent": {"k": "v" * 16000},
    }
    codes = [f.code for f in check_result(result)]
    assert sorted(codes) == sorted(["image_type", "image_too_large", "text_offloaded", "too_many_images", "structured_dropped"])
    assert check_result({"content": [{"type": "text", "text": "é" * 8000}]}) == []
    seen = []
    assert checked(result, seen.append) is result and len(seen) == 5


async def test_with_limits_reports_each_result() -> None:
    seen = []

    @with_limits(on_limit=seen.append)
    async def tool() -> dict:
        return {"content": [{"type": "text", "text": "y" * 9000}]}

    await tool()
    assert [f.code for f in seen] == ["text_offloaded"]


async def test_a_failing_store_never_runs_the_tool() -> None:
    class Down:
        async def claim(self, key, entry, lease_s):
            raise ConnectionError("store down")

    error, runs = await refusal_of(Down())
    assert error.code == "idempotency_store_failed" and isinstance(error.__cause__, ConnectionError)
    assert runs == []


class Scripted:
    """A store whose claim answers what the test says and whose release and complete may fail."""

    def __init__(self, held=None, fail_release=False, fail_complete=False) -> None:
        self.held, self.fail_release, self.fail_complete = held, fail_release, fail_complete
        self.released = 0

    async def claim(self, key, entry, lease_s):
        return self.held

    async def complete(self, key, entry, ttl_s):
        if self.fail_complete:
            raise ConnectionError("complete failed")

    async def release(self, key, entry):
        self.released += 1
        if self.fail_release:
            raise ConnectionError("release failed")


async def test_a_store_error_after_the_tool_ran_never_escapes() -> None:
    """input_required, a raising tool, a finished one: the store fails
    after the tool ran; the call's own outcome stands, on_store_error hears."""
    seen: list[str] = []
    # A round of a 2026-07-28 multi-round-trip call (the SDK's InputRequiredResult as a dict).
    asks = {"resultType": "input_required", "inputRequests": {}}

    def tool_of(store, body):
        @idempotent(store=store, on_store_error=lambda e: seen.append(str(e)))
        async def tool(x: int) -> object:
            return body()

        return tool

    with running_as(verified()):
        store = Scripted(fail_release=True)
        assert await tool_of(store, lambda: asks)(1) is asks and store.released == 1

        def boom() -> object:
            raise RuntimeError("the tool failed")

        with pytest.raises(RuntimeError, match="the tool failed"):
            await tool_of(Scripted(fail_release=True), boom)(1)
        done = await tool_of(Scripted(fail_complete=True), lambda: "ok")(1)
        assert done.structured_content == {"result": "ok"}

        # A hook that raises changes nothing either.
        @idempotent(store=Scripted(fail_release=True), on_store_error=lambda e: 1 / 0)
        async def asking(x: int) -> object:
            return asks

        assert await asking(1) is asks
    assert seen == ["release failed", "release failed", "complete failed"]


@pytest.mark.parametrize(
    "held",
    [
        {"state": "done", "hash": "h"},  # no result: a KeyError before
        {"state": "done", "hash": "h", "result": "not an object"},
        {"state": "running", "hash": "h"},  # no owner
        {"state": "gone", "hash": "h", "owner": "o"},
        {"hash": 5, "state": "done", "result": {}},
        ["state", "done"],
        "done",
    ],
)
async def test_a_malformed_entry_is_a_clear_refusal(held) -> None:
    error, runs = await refusal_of(Scripted(held=held))
    assert error.code == "idempotency_entry_invalid" and runs == []


def test_a_malformed_stored_text_is_a_clear_refusal() -> None:
    from toolctx.helpers.idempotency import decode_entry

    for raw in (b"\xff\xfe", "not json", "{}", '{"state":"done","hash":"h"}'):
        with pytest.raises(toolctx.ToolctxError) as e:
            decode_entry(raw)
        assert e.value.code == "idempotency_entry_invalid"


def test_namespaces_never_share_a_store_key() -> None:
    # The npm package's idempotencyStoreKey gives the same (npm/test/helpers-unit.test.mjs).
    assert store_key("", "task-1:call-1") == ":task-1:call-1"
    assert store_key("orders", "task-1:call-1") == "orders:task-1:call-1"
    assert store_key("a:b", "c") == "a%3Ab:c" and store_key("a", "b:c") == "a:b:c"
    assert store_key("100%", "k") == "100%25:k" and store_key("%3A", "k") == "%253A:k"
    parts = ["", "a", "b", ":", "%", "a:b", "b:c", "%3A", "a%3A", "::"]
    joined = {}
    for namespace in parts:
        for key in parts:
            joined.setdefault(store_key(namespace, key), []).append((namespace, key))
    assert all(len(pairs) == 1 for pairs in joined.values())


async def test_two_namespaces_in_one_store_are_apart() -> None:
    """Namespace "p" with task "t" and no namespace with task "pt" were the
    same key "pt:c" once, so the second call got the first call's result."""
    store = MemoryIdempotencyStore()
    runs = []

    def tool_in(namespace: str):
        @idempotent(store=store, namespace=namespace)
        async def tool(x: int) -> str:
            runs.append(namespace)
            return namespace

        return tool

    for namespace, task in (("p", "t"), ("", "pt"), ("p", "t")):
        with running_as(verified_as(task, "c")):
            result = await tool_in(namespace)(1)
    assert result.meta[REPLAYED] is True and runs == ["p", ""]


async def test_a_replay_is_the_first_result_as_sent() -> None:
    from mcp.types import CallToolResult, TextContent

    @idempotent(store=MemoryIdempotencyStore())
    async def tool(x: int) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="hi")], structured_content={"n": [1, 2]}, _meta={"app/trace": "t-1", "nested": {"k": None}})

    with running_as(verified()):
        first = await tool(1)
        again = await tool(1)
    sent = first.model_dump(by_alias=True, exclude_none=True)
    replayed = again.model_dump(by_alias=True, exclude_none=True)
    assert replayed == {**sent, "_meta": {**sent["_meta"], REPLAYED: True}}
    assert replayed["_meta"]["nested"] == {"k": None}


async def test_progress_held_back_report_goes_out_on_the_asyncio_loop_too() -> None:
    sent = []

    async def send(p, total, message):
        sent.append(p)

    report = Progress(send, interval_s=0.05)
    await report(1)
    await report(2)
    await report(3)
    assert sent == [1]
    with anyio.fail_after(5):  # the timer sends the held-back 3 (not 2)
        while len(sent) < 2:
            await anyio.sleep(0.01)
    assert sent == [1, 3]
    await anyio.sleep(0.1)
    await report(4)  # the interval since 3 has passed: at once
    assert sent == [1, 3, 4]
    report.close()
    await report(5)
    assert sent == [1, 3, 4]


async def test_the_context_parameter_is_found_and_models_are_hashed() -> None:
    from mcp.server.mcpserver import Context
    from pydantic import BaseModel

    class Order(BaseModel):
        sku: str
        qty: int

    runs = []

    @idempotent(store=MemoryIdempotencyStore())
    async def place(order: Order, ctx: Context) -> str:
        runs.append(order.qty)
        return "placed"

    # A Context outside any HTTP request (stdio): no verified context, refused.
    refused = await place(Order(sku="a", qty=1), Context())
    assert refused.meta["toolctx/idempotency"] == "unverified" and runs == []
    with running_as(verified()):
        # Without a Context parameter the context variable is read; the model is part of the hash.
        @idempotent(store=MemoryIdempotencyStore())
        async def place_plain(order: Order) -> str:
            runs.append(order.qty)
            return "placed"

        assert (await place_plain(Order(sku="a", qty=1))).content[0].text == "placed"
        assert (await place_plain(Order(sku="a", qty=1))).meta["agentarea/replayed"] is True
        assert (await place_plain(Order(sku="a", qty=2))).meta["toolctx/idempotency"] == "conflict"
    assert runs == [1]


class _Call:
    """A tool's context source as an SDK hands it over: the ASGI scope of the
    request (its verified context, its MCP-Protocol-Version header) and, when
    the SDK read one, the request's protocol revision."""

    def __init__(self, ctx: toolctx.Context, header: str | None, protocol_version: str | None = None) -> None:
        from toolctx.context import SCOPE_KEY

        headers = [] if header is None else [(b"mcp-protocol-version", header.encode())]
        self.scope = {"type": "http", "state": {SCOPE_KEY: ctx}, "headers": headers}
        self.protocol_version = protocol_version


async def test_a_replay_is_written_for_the_retrys_protocol_revision(monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper hands the core the call's revision (the SDK's reading, else
    the MCP-Protocol-Version header, else none known) and answers with the
    core's replay for it; the SDK's own model then writes it for its era."""
    import json

    from toolctx import _native
    from toolctx.helpers import idempotency as module

    answers: list[tuple[str, dict]] = []
    real = _native.idempotency_held

    def spy(raw: object, digest: str, revision: str) -> tuple[str, str | None]:
        decision, replay = real(raw, digest, revision)
        answers.append((revision, json.loads(replay) if replay else {}))
        return decision, replay

    monkeypatch.setattr(module._native, "idempotency_held", spy)

    @idempotent(store=MemoryIdempotencyStore())
    async def tool(x: int, ctx: object) -> dict:
        # A 2026-07-28 answer: stored without resultType, in canonical member order.
        return {"resultType": "complete", "structuredContent": {"b": 1, "a": 2}, "content": []}

    ctx = verified("call-revisions")
    await tool(1, _Call(ctx, "2026-07-28"))
    for header, sdk in [("2025-11-25", None), ("2026-07-28", "2025-06-18"), ("2026-07-28", None), (None, None)]:
        again = await tool(1, _Call(ctx, header, protocol_version=sdk))
        assert again.meta["agentarea/replayed"] is True
    assert [(r, "resultType" in a) for r, a in answers] == [
        ("2025-11-25", False), ("2025-06-18", False), ("2026-07-28", True), ("", True)]
    assert all(list(a["structuredContent"]) == ["a", "b"] for _, a in answers)
