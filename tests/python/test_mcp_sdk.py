"""The official MCP SDK (mcp 2.x): MCPServer's Streamable HTTP app behind
toolctx.mcp.protect, served by uvicorn on 127.0.0.1, called with the SDK's
own client; the tool reads the verified context with context_from(ctx)."""

from __future__ import annotations


import anyio
import pytest
from conftest import INSTANCE, SECRET, claims
from mcp.server.mcpserver import Context, MCPServer
from mcp_client import connect

import toolctx
from toolctx.helpers import REPLAYED, idempotent, progress
from toolctx.mcp import protect

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_app(runs: list, verifier: toolctx.Verifier | None = None):
    server = MCPServer("toolctx-test")

    @server.tool()
    async def echo(text: str, ctx: Context) -> str:
        context = toolctx.context_from(ctx)
        runs.append(("echo", context))
        return f"{text} for {context.task_id if context else 'nobody'}"

    @server.tool()
    @idempotent
    async def charge(amount: int, ctx: Context) -> str:
        runs.append(("charge", amount))
        return f"charged {amount}"

    @server.tool()
    async def slow(steps: int, pause_ms: int, ctx: Context) -> str:
        # The reporter's clock reads the scripted time (each pause exactly
        # pause_ms), so what is sent does not depend on the machine's pace;
        # the real pauses give its timer the time to fire.
        scripted = [0.0]
        report = progress(ctx, interval_s=0.5, clock=lambda: scripted[0])
        for i in range(steps):
            await report(i + 1, steps, f"step {i + 1}")
            scripted[0] += pause_ms / 1000
            await anyio.sleep(pause_ms / 1000)
        return "done"

    app = server.streamable_http_app(stateless_http=True)
    return protect(app, verifier or toolctx.Verifier(INSTANCE, [SECRET]))


async def test_accepted_call_reaches_the_tool_with_its_context(serve) -> None:
    runs: list = []
    s = serve(make_app(runs))
    async with connect(f"{s.url}/mcp") as (session, platform):
        c = claims("echo", end_user_id="user-42")
        result = await platform.call(session, "echo", {"text": "hi"}, c, SECRET)
        assert not result.is_error, result
        assert result.content[0].text == "hi for task-1"
        ((_, context),) = runs
        assert isinstance(context, toolctx.Context)
        assert context.idempotency_key == "task-1:call-1"
        assert context.end_user_id == "user-42"
        assert context.jti == c.jti


async def test_refused_call_never_runs_and_carries_the_reason(serve) -> None:
    runs: list = []
    s = serve(make_app(runs))
    async with connect(f"{s.url}/mcp") as (session, platform):
        from mcp import MCPError

        with pytest.raises(MCPError) as e:
            await platform.call(session, "echo", {"text": "hi"}, None, SECRET)
        assert e.value.error.code == -32001
        assert e.value.error.data == {"reason": "token_missing"}
        with pytest.raises(MCPError) as e:
            await platform.call(session, "echo", {"text": "hi"}, claims("other_tool"), SECRET)
        assert e.value.error.data == {"reason": "tool_mismatch"}
        with pytest.raises(MCPError) as e:
            await platform.call(session, "echo", {"text": "hi"}, claims("echo"), "another secret that is long enough, 32+")
        assert e.value.error.data == {"reason": "signature_invalid"}
        # tools/list is not this contract's business: it passes untouched.
        listed = await session.list_tools()
        assert {t.name for t in listed.tools} == {"echo", "charge", "slow"}
    assert runs == []


async def test_idempotent_retry_is_replayed_and_conflict_refused(serve) -> None:
    runs: list = []
    s = serve(make_app(runs))
    async with connect(f"{s.url}/mcp") as (session, platform):
        first = await platform.call(session, "charge", {"amount": 5}, claims("charge"), SECRET)
        # A retry: same task, call and arguments, a new token (new jti).
        again = await platform.call(session, "charge", {"amount": 5}, claims("charge"), SECRET)
        other = await platform.call(session, "charge", {"amount": 6}, claims("charge"), SECRET)
        fresh = await platform.call(session, "charge", {"amount": 6}, claims("charge", tool_call_id="call-2"), SECRET)
    assert first.content[0].text == "charged 5" and not (first.meta or {}).get(REPLAYED)
    assert again.content[0].text == "charged 5" and again.meta[REPLAYED] is True
    assert other.is_error and other.meta["toolctx/idempotency"] == "conflict"
    assert fresh.content[0].text == "charged 6"
    assert runs == [("charge", 5), ("charge", 6)]


async def test_progress_is_coalesced_to_the_platforms_rate(serve) -> None:
    runs: list = []
    s = serve(make_app(runs))
    seen: list = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        seen.append((p, total, message))

    async with connect(f"{s.url}/mcp") as (session, platform):
        result = await platform.call(
            session, "slow", {"steps": 10, "pause_ms": 20}, claims("slow"), SECRET, progress_callback=on_progress
        )
        assert result.content[0].text == "done"
        # 10 reports within 0.2 s: the first at once, the final at once, nothing between.
        assert seen[0][0] == 1 and seen[-1] == (10, 10, "step 10"), seen
        assert len(seen) == 2, seen
        seen.clear()
        # 6 reports over 0.9 s: a held-back one goes out when its 0.5 s
        # interval ends (by the timer, or with the next report past it).
        result = await platform.call(
            session, "slow", {"steps": 6, "pause_ms": 150}, claims("slow", tool_call_id="call-2"), SECRET,
            progress_callback=on_progress,
        )
    assert result.content[0].text == "done"
    assert seen[0][0] == 1 and seen[-1] == (6, 6, "step 6"), seen
    # The first, one when its interval ended, and the final.
    assert len(seen) == 3, seen
    assert [p for p, _, _ in seen] == sorted(p for p, _, _ in seen), seen
