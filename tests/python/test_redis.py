"""Redis (a redis-server of its own on 127.0.0.1): the replay guard shared
by two verifiers, and idempotent retries across two MCP server replicas
sharing one store, over the SDK's client."""

from __future__ import annotations

import json

import httpx
import pytest
import redis
import redis.asyncio
from conftest import INSTANCE, SECRET, claims
from mcp.server.mcpserver import Context, MCPServer
from mcp_client import connect

import toolctx
from toolctx.helpers import REPLAYED, RedisIdempotencyStore, idempotent
from toolctx.mcp import protect

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_replay_guard_shared_by_two_verifiers(redis_url) -> None:
    client = redis.Redis.from_url(redis_url)
    one = toolctx.Verifier(INSTANCE, [SECRET], replay=toolctx.RedisReplayStore(client, prefix="t1:"))
    two = toolctx.Verifier(INSTANCE, [SECRET], replay=toolctx.RedisReplayStore(client, prefix="t1:"))
    c = claims()
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "_meta": c.meta()}})
    headers = [(toolctx.TOKEN_HEADER, c.mint(SECRET))]
    assert one.verify("POST", headers, body).outcome == "accept"
    replayed = two.verify("POST", headers, body)
    assert (replayed.status, replayed.reason) == (401, "token_replayed")
    ttl = client.pttl(f"t1:{c.jti}")
    assert 0 < ttl <= 330_000
    down = toolctx.Verifier(INSTANCE, [SECRET], replay=toolctx.RedisReplayStore(redis.Redis(port=1)))
    fresh = claims()
    refused = down.verify("POST", [(toolctx.TOKEN_HEADER, fresh.mint(SECRET))], json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "_meta": fresh.meta()}}
    ))
    assert (refused.status, refused.reason) == (500, "internal_error")


def test_the_store_sends_the_cores_command(redis_url) -> None:
    """What Redis receives is exactly `toolctx_core::replay::redis::claim_args`."""
    client = redis.Redis.from_url(redis_url)
    v = toolctx.Verifier(INSTANCE, [SECRET], replay=toolctx.RedisReplayStore(client, prefix="t3:"))
    c = claims()
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "_meta": c.meta()}})
    now = c.iat + 5
    with client.monitor() as monitor:
        assert v.verify("POST", [(toolctx.TOKEN_HEADER, c.mint(SECRET))], body, now).outcome == "accept"
        seen = None
        for _ in range(20):  # MONITOR also shows its own handshake
            command = monitor.next_command()["command"]
            if command.startswith("SET "):
                seen = command
                break
    expected = toolctx._native.redis_claim_args("t3:", c.jti, c.exp + 30, now)
    assert seen is not None and seen.split(" ") == expected
    assert expected[:4] == ["SET", f"t3:{c.jti}", "1", "NX"] and expected[4] == "PX"


def test_a_reply_other_than_ok_or_nil_is_internal_error(redis_url) -> None:
    """Replies the real Redis gives in the claim's place (an integer, a bulk
    string, a status other than OK, an OOM error): the core's FAILED, the
    call refused 500 internal_error, never a first use."""
    client = redis.Redis.from_url(redis_url)
    client.set("t4:held", "x")

    class Odd:
        def __init__(self, command: list[str]) -> None:
            self.command = command

        def execute_command(self, *args: object) -> object:
            return client.execute_command(*self.command)

    for command in (["INCR", "t4:n"], ["GET", "t4:held"], ["ECHO", "OK?"]):
        store = toolctx.RedisReplayStore(Odd(command))
        assert store.first_use("j", 100, 10) == toolctx.ClaimAnswer.FAILED, command
        c = claims()
        body = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "echo", "_meta": c.meta()}})
        r = toolctx.Verifier(INSTANCE, [SECRET], replay=store).verify("POST", [(toolctx.TOKEN_HEADER, c.mint(SECRET))], body)
        assert (r.status, r.reason, r.id) == (500, "internal_error", 4), command
    # Over its memory limit, Redis answers the claim itself with -OOM.
    store = toolctx.RedisReplayStore.from_url(redis_url, prefix="t4:")
    client.config_set("maxmemory", "1")
    try:
        c = claims()
        body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "echo", "_meta": c.meta()}})
        r = toolctx.Verifier(INSTANCE, [SECRET], replay=store).verify("POST", [(toolctx.TOKEN_HEADER, c.mint(SECRET))], body)
        assert (r.status, r.reason) == (500, "internal_error")
    finally:
        client.config_set("maxmemory", "0")
    c = claims()
    body = json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "echo", "_meta": c.meta()}})
    assert toolctx.Verifier(INSTANCE, [SECRET], replay=store).verify("POST", [(toolctx.TOKEN_HEADER, c.mint(SECRET))], body).outcome == "accept"


async def test_replay_guard_behind_the_middleware(redis_url, serve) -> None:
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    runs = []

    async def endpoint(request):
        runs.append(toolctx.context_from(request).jti)
        return PlainTextResponse("ran")

    store = toolctx.RedisReplayStore(redis.Redis.from_url(redis_url), prefix="t2:")
    v = toolctx.Verifier(INSTANCE, [SECRET], replay=store)
    assert v.has_shared_replay_store
    replicas = [serve(protect(Starlette(routes=[Route("/mcp", endpoint, methods=["POST"])]), v)) for _ in range(2)]
    c = claims()
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "_meta": c.meta()}})
    token = c.mint(SECRET)
    async with httpx.AsyncClient() as http:
        first = await http.post(f"{replicas[0].url}/mcp", content=body, headers={toolctx.TOKEN_HEADER: token})
        second = await http.post(f"{replicas[1].url}/mcp", content=body, headers={toolctx.TOKEN_HEADER: token})
    assert first.text == "ran" and second.status_code == 401
    assert second.json()["error"]["data"]["reason"] == "token_replayed"
    assert runs == [c.jti]


async def test_idempotent_across_two_replicas_sharing_redis(redis_url, serve) -> None:
    runs: list = []

    def replica():
        store = RedisIdempotencyStore(redis.asyncio.Redis.from_url(redis_url), prefix="t3:")
        server = MCPServer("replica")

        @server.tool()
        @idempotent(store=store)
        async def transfer(amount: int, ctx: Context) -> str:
            runs.append(amount)
            return f"sent {amount}"

        return protect(server.streamable_http_app(stateless_http=True), toolctx.Verifier(INSTANCE, [SECRET]))

    a, b = serve(replica()), serve(replica())
    async with connect(f"{a.url}/mcp") as (sa, pa), connect(f"{b.url}/mcp") as (sb, pb):
        first = await pa.call(sa, "transfer", {"amount": 10}, claims("transfer"), SECRET)
        again = await pb.call(sb, "transfer", {"amount": 10}, claims("transfer"), SECRET)
        other = await pb.call(sb, "transfer", {"amount": 11}, claims("transfer"), SECRET)
    assert first.content[0].text == "sent 10" and not (first.meta or {}).get(REPLAYED)
    assert again.content[0].text == "sent 10" and again.meta[REPLAYED] is True
    assert other.is_error and other.meta["toolctx/idempotency"] == "conflict"
    assert runs == [10]
