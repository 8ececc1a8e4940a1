"""The ASGI middleware, driven directly (to see exactly what the app and
the client get) and under Starlette + uvicorn on 127.0.0.1 with httpx."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from conftest import INSTANCE, SECRET, claims
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import toolctx
from toolctx.asgi import ToolctxMiddleware

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def call_body(c: toolctx.Claims | None, tool: str = "echo", **extra_meta) -> bytes:
    meta = {**(c.meta() if c else {}), **extra_meta}
    return json.dumps(
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": {}, "_meta": meta}}
    ).encode()


async def drive(app, method: str, headers: list, chunks: list[bytes]):
    """One request through `app`: what it sent back, and how many body chunks were read."""
    reads = 0
    sent: list = []

    async def receive():
        nonlocal reads
        if reads < len(chunks):
            reads += 1
            return {"type": "http.request", "body": chunks[reads - 1], "more_body": reads < len(chunks)}
        await anyio.sleep(60)
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": "/mcp", "headers": headers, "state": {}}
    await app(scope, receive, send)
    return sent, reads


class Recorder:
    """An app that records what reached it and answers 200."""

    def __init__(self) -> None:
        self.seen: list = []

    async def __call__(self, scope, receive, send):
        body = b""
        if scope["type"] == "http" and scope["method"] == "POST":
            while True:
                m = await receive()
                body += m.get("body", b"")
                if not m.get("more_body"):
                    break
        self.seen.append((scope, body, toolctx.current_context()))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def test_credential_refused_before_the_body_is_read() -> None:
    inner = Recorder()
    v = toolctx.Verifier(INSTANCE, [SECRET], credential={"header": "authorization", "values": ["Bearer k"]})
    sent, reads = await drive(ToolctxMiddleware(inner, v), "POST", [(b"authorization", b"Bearer x")], [call_body(claims())])
    assert reads == 0 and inner.seen == []
    assert sent[0]["status"] == 401
    body = json.loads(sent[1]["body"])
    assert body == {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "invalid credential", "data": {"reason": "credential_invalid"}}}


async def test_what_passes_reaches_the_app_untouched(verifier) -> None:
    inner = Recorder()
    app = ToolctxMiddleware(inner, verifier)
    listing = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    await drive(app, "POST", [(b"content-type", b"application/json")], [listing[:10], listing[10:]])
    await drive(app, "GET", [], [])
    (scope1, body1, ctx1), (scope2, _, _) = inner.seen
    assert body1 == listing and ctx1 is None and "toolctx" not in scope1["state"]
    assert scope2["method"] == "GET"


async def test_accepted_call_hands_the_context_on(verifier) -> None:
    inner = Recorder()
    c = claims()
    body = call_body(c)
    await drive(ToolctxMiddleware(inner, verifier), "POST", [(b"x-agentarea-context", c.mint(SECRET).encode())], [body])
    ((scope, seen_body, current),) = inner.seen
    assert seen_body == body
    assert scope["state"]["toolctx"] == current and current.task_id == "task-1"
    assert toolctx.context_from(scope) == current
    assert toolctx.current_context() is None  # reset after the request


async def test_refusal_answers_with_the_cores_body_and_the_request_id(verifier) -> None:
    inner = Recorder()
    c = claims()
    sent, _ = await drive(ToolctxMiddleware(inner, verifier), "POST", [], [call_body(c)])
    assert inner.seen == [] and sent[0]["status"] == 401
    assert json.loads(sent[1]["body"])["id"] == 7
    assert json.loads(sent[1]["body"])["error"]["data"]["reason"] == "token_missing"


async def test_a_large_body_is_refused_without_reading_it_all() -> None:
    inner = Recorder()
    v = toolctx.Verifier(INSTANCE, [SECRET], max_body_bytes=1000)
    chunks = [b"x" * 600] * 10
    sent, reads = await drive(ToolctxMiddleware(inner, v), "POST", [], chunks)
    assert sent[0]["status"] == 413 and reads == 2 and inner.seen == []


async def test_tuix_headers_are_replaced_from_verified_meta() -> None:
    inner = Recorder()
    verifier = toolctx.Verifier(INSTANCE, [SECRET], forward={"tuix": True, "headers": {"task_id": "X-Task"}})
    c = claims()
    body = call_body(c, sessionId="sess 9", idempotencyKey=5)
    spoofed = [(b"X-Session-Id", b"spoofed"), (b"x-session-id", b"again"), (b"x-task", b"t")]
    headers = [(b"x-agentarea-context", c.mint(SECRET).encode()), *spoofed]
    app = ToolctxMiddleware(inner, verifier, tuix_headers=True)
    await drive(app, "POST", headers, [body])
    await drive(app, "GET", [(b"X-Idempotency-Key", b"spoofed"), (b"accept", b"*/*")], [])
    (accepted, _, _), (passed, _, _) = inner.seen
    got = [(n.lower(), v) for n, v in accepted["headers"]]
    # The core's values (CONTRACT §7: a space as %20, a number as its JSON
    # text), each once; every spoofed copy gone.
    assert [v for n, v in got if n == b"x-session-id"] == [b"sess%209"]
    assert [v for n, v in got if n == b"x-idempotency-key"] == [b"5"]
    assert [v for n, v in got if n == b"x-task"] == [c.task_id.encode()]
    assert [n.lower() for n, _ in passed["headers"]] == [b"accept"]


def test_tuix_headers_flag_needs_a_verifier_that_forwards_them(verifier) -> None:
    with pytest.raises(TypeError, match="forward"):
        ToolctxMiddleware(Recorder(), verifier, tuix_headers=True)


async def test_a_verifier_that_cannot_run_refuses(verifier) -> None:
    inner = Recorder()
    app = ToolctxMiddleware(inner, verifier)

    class Broken:
        def check_headers(self, *a):
            raise RuntimeError("boom")

    app.verifier = Broken()
    sent, _ = await drive(app, "POST", [], [call_body(claims())])
    assert sent[0]["status"] == 500 and inner.seen == []
    assert json.loads(sent[1]["body"])["error"]["data"]["reason"] == "internal_error"


async def test_starlette_under_uvicorn(serve) -> None:
    async def endpoint(request: Request) -> JSONResponse:
        context = toolctx.context_from(request)
        return JSONResponse({"task": context.task_id if context else None, "current": toolctx.current_context() is not None})

    app = Starlette(routes=[Route("/mcp", endpoint, methods=["POST", "GET"])])
    s = serve(ToolctxMiddleware(app, toolctx.Verifier(INSTANCE, [SECRET])))
    c = claims()
    async with httpx.AsyncClient(base_url=s.url) as client:
        ok = await client.post("/mcp", content=call_body(c), headers={toolctx.TOKEN_HEADER: c.mint(SECRET)})
        refused = await client.post("/mcp", content=call_body(c))
        dup = await client.post("/mcp", content=b'{"a":1,"a":2}')
        got = await client.get("/mcp")
    assert ok.status_code == 200 and ok.json() == {"task": "task-1", "current": True}
    assert refused.status_code == 401 and refused.json()["error"]["data"]["reason"] == "token_missing"
    assert dup.status_code == 400 and dup.json()["error"]["data"]["reason"] == "duplicate_member"
    assert got.json() == {"task": None, "current": False}


async def test_aivax_verifier_behind_the_middleware() -> None:
    inner = Recorder()
    v = toolctx.AivaxVerifier("aivax-hook-key-5f1c9e2a", require_nonce=True)
    app = ToolctxMiddleware(inner, v)
    meta = {"_aiv_external_user_id": "user-981", "_aiv_call_source": "WebChatClient"}
    body = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "x", "_meta": meta}}).encode()
    sent, _ = await drive(app, "POST", [], [body])
    assert sent[0]["status"] == 401 and json.loads(sent[1]["body"])["error"]["data"]["reason"] == "nonce_missing"
    # A nonce of Python's bcrypt over the hook key (tests/vectors/conventions/aivax.json).
    nonce = "$2b$04$abcdefghijklmnopqrstuu/WqxUYJo45R4wf3LBoPPGgnrh5sKMi2"
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "x", "_meta": {**meta, "_aiv_nonce": nonce}}}
    ).encode()
    await drive(app, "POST", [], [body])
    ((scope, _, _),) = inner.seen
    context = toolctx.aivax_context_from(scope)
    assert context.nonce_verified and context.external_user_id == "user-981"
    assert toolctx.context_from(scope) is None
