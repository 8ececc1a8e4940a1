"""FastMCP: its http_app with toolctx's middleware through FastMCP's own
middleware hook, served by uvicorn on 127.0.0.1; called with the official
SDK's client and with FastMCP's own Client; the tool reads the context with
context_from(ctx)."""

from __future__ import annotations

import pytest
from conftest import INSTANCE, SECRET, claims
from fastmcp import Client, Context, FastMCP
from fastmcp.client.transports import StreamableHttpTransport
from mcp_client import connect

import toolctx
from toolctx.fastmcp import middleware
from toolctx.helpers import REPLAYED, idempotent

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_app(runs: list):
    mcp = FastMCP("toolctx-fastmcp-test")

    @mcp.tool
    async def echo(text: str, ctx: Context) -> str:
        context = toolctx.context_from(ctx)
        runs.append(context)
        return f"{text} for {context.task_id if context else 'nobody'}"

    @mcp.tool
    @idempotent
    async def book(seat: str, ctx: Context) -> dict:
        runs.append(seat)
        return {"seat": seat}

    return mcp.http_app(
        path="/mcp", stateless_http=True, middleware=[middleware(toolctx.Verifier(INSTANCE, [SECRET]))]
    )


async def test_sdk_client_accepted_and_refused(serve) -> None:
    runs: list = []
    s = serve(make_app(runs))
    async with connect(f"{s.url}/mcp") as (session, platform):
        ok = await platform.call(session, "echo", {"text": "hi"}, claims("echo", agent_id="agent-7"), SECRET)
        assert ok.content[0].text == "hi for task-1"
        from mcp import MCPError

        with pytest.raises(MCPError) as e:
            await platform.call(session, "echo", {"text": "hi"}, None, SECRET)
        assert e.value.error.data == {"reason": "token_missing"}
    (context,) = runs
    assert isinstance(context, toolctx.Context) and context.agent_id == "agent-7"


async def test_fastmcp_client_with_idempotent_tool(serve) -> None:
    runs: list = []
    s = serve(make_app(runs))
    holder: dict = {}

    def transport() -> StreamableHttpTransport:
        return StreamableHttpTransport(f"{s.url}/mcp", headers={toolctx.TOKEN_HEADER: holder["token"]})

    results = []
    for seat in ("12A", "12A", "14C"):
        c = claims("book")
        holder["token"] = c.mint(SECRET)
        async with Client(transport()) as client:
            results.append(await client.call_tool_mcp("book", {"seat": seat}, meta=c.meta()))
    first, again, other = results
    assert first.structured_content == {"seat": "12A"}
    assert again.structured_content == {"seat": "12A"} and again.meta[REPLAYED] is True
    assert other.is_error and other.meta["toolctx/idempotency"] == "conflict"
    assert runs == ["12A"]
    # The replay is the first result exactly as FastMCP sent it, its _meta included, plus the marker.
    sent = first.model_dump(by_alias=True, exclude_none=True)
    assert again.model_dump(by_alias=True, exclude_none=True) == {**sent, "_meta": {**(sent.get("_meta") or {}), REPLAYED: True}}


async def test_fastmcp_replay_keeps_fastmcps_own_meta(serve) -> None:
    """A tool whose value FastMCP wraps (a non-object output schema) sends
    `_meta.fastmcp.wrap_result: true`, which FastMCP's client reads to
    unwrap it: the replay carries it too."""
    runs: list = []
    mcp = FastMCP("toolctx-fastmcp-wrap")

    @mcp.tool
    @idempotent
    async def seats(row: str, ctx: Context) -> list[str]:
        runs.append(row)
        return [f"{row}1", f"{row}2"]

    s = serve(mcp.http_app(path="/mcp", stateless_http=True, middleware=[middleware(toolctx.Verifier(INSTANCE, [SECRET]))]))
    holder: dict = {}

    def transport() -> StreamableHttpTransport:
        return StreamableHttpTransport(f"{s.url}/mcp", headers={toolctx.TOKEN_HEADER: holder["token"]})

    raw = []
    for _ in range(2):
        c = claims("seats")
        holder["token"] = c.mint(SECRET)
        async with Client(transport()) as client:
            raw.append(await client.call_tool_mcp("seats", {"row": "12"}, meta=c.meta()))
    c = claims("seats")
    holder["token"] = c.mint(SECRET)
    async with Client(transport()) as client:
        unwrapped = await client.call_tool("seats", {"row": "12"}, meta=c.meta())
    assert unwrapped.data == ["121", "122"]  # FastMCP's client unwrapped the replay by the marker
    first, again = raw
    assert first.meta["fastmcp"] == {"wrap_result": True}
    assert again.meta == {**first.meta, REPLAYED: True}
    assert first.structured_content == again.structured_content == {"result": ["121", "122"]}
    assert first.content == again.content
    assert runs == ["12"]
