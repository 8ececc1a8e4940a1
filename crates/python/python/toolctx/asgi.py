"""Pure ASGI middleware: verifies every request before the app sees it.

Works under any ASGI server and framework (uvicorn, Starlette, FastAPI, the
MCP SDK's Streamable HTTP app, FastMCP's ``http_app``)::

    from toolctx import Verifier
    from toolctx.asgi import ToolctxMiddleware

    app = ToolctxMiddleware(app, Verifier(instance_id, [secret]))

- Steps 0 and 1 (method, static credential) run on the headers alone: a
  refused credential is answered before a byte of the body is read.
- The body is read up to the verifier's ``max_body_bytes`` (one byte more
  proves it too large), then the core decides.
- A refusal is answered with the core's status and JSON-RPC body; the app
  never runs. Whatever passes (``GET``, ``initialize``, ``tools/list``...)
  reaches the app untouched, its body replayed byte for byte.
- An accepted call reaches the app with the verified ``Context`` in
  ``scope["state"]["toolctx"]`` (Starlette's ``request.state.toolctx``) and
  in a context variable (``toolctx.current_context()``); a tool gets it with
  ``toolctx.context_from(ctx)``.
- What the verifier forwards (``Verifier(..., forward=...)``) is the core's
  decision: on every request that passes or is accepted the middleware
  applies the verdict's ``upstream`` to ``scope["headers"]`` (the forwarded
  names removed, whatever the caller sent; on an accepted call the core's
  values added).
- Anything that goes wrong inside the middleware refuses the request
  (``internal_error``, 500): it never fails open.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from toolctx._native import (
    TUIX_HEADERS,
    AivaxContext,
    AivaxReadBody,
    AivaxVerifier,
    ReadBody,
    Upstream,
    Verifier,
    refuse,
)
from toolctx.context import AIVAX_SCOPE_KEY, SCOPE_KEY, _current, _current_aivax
from toolctx.telemetry import OnVerdict, Recorder

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("toolctx")


class _Disconnected(Exception):
    """The client went away while the body was being read."""


class ToolctxMiddleware:
    """``ToolctxMiddleware(app, verifier, *, clock=None)``.

    ``verifier`` is a ``toolctx.Verifier`` or a ``toolctx.AivaxVerifier``;
    the headers it forwards are its ``forward`` setting (for the Tuix
    headers, ``forward={"tuix": True}``). ``tuix_headers=True`` is kept for
    code written against 0.1: it only checks that the verifier forwards the
    Tuix headers, and refuses to start otherwise. ``clock`` returns Unix
    seconds as an ``int`` (default: the core reads the system clock), for
    tests.
    ``on_verdict`` is called with a ``toolctx.telemetry.VerdictEvent`` per
    request; ``telemetry=False`` records no metrics or spans
    (``toolctx.telemetry``); unset, both are the verifier's. Every request is
    counted here once, passes and refusals before the body included;
    refusals are logged on ``toolctx``.
    """

    def __init__(
        self,
        app: ASGIApp,
        verifier: Verifier | AivaxVerifier,
        *,
        tuix_headers: bool = False,
        clock: Callable[[], int] | None = None,
        on_verdict: OnVerdict | None = None,
        telemetry: bool | None = None,
    ) -> None:
        if not isinstance(verifier, (Verifier, AivaxVerifier)):
            raise TypeError("ToolctxMiddleware needs a toolctx.Verifier or toolctx.AivaxVerifier")
        if tuix_headers and not all(h in verifier.removed_headers for _, h in TUIX_HEADERS):
            raise TypeError(
                "tuix_headers=True: the verifier decides what is forwarded; "
                'construct it with forward={"tuix": True}'
            )
        self.app = app
        self.verifier = verifier
        self.clock = clock
        self._aivax = isinstance(verifier, AivaxVerifier)
        # Unset here: the verifier's own (toolctx.Verifier's on_verdict and telemetry).
        own = getattr(verifier, "_recorder", None)
        if on_verdict is None and own is not None:
            on_verdict = own.on_verdict
        if telemetry is None:
            telemetry = own.telemetry if own is not None else True
        self._recorder = Recorder(on_verdict, telemetry, "middleware")

    def _native(self, name: str) -> Callable[..., Any]:
        """The verifier's native method: toolctx.Verifier's own would count the request again."""
        v = self.verifier
        for native in (Verifier, AivaxVerifier):
            if isinstance(v, native):
                method: Callable[..., Any] = getattr(native, name).__get__(v)
                return method
        return getattr(v, name)  # type: ignore[no-any-return]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        try:
            await self._handle(scope, receive, send)
        except _Disconnected:
            return

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = self._recorder.start()
        client = scope.get("client")
        peer = str(client[0]) if client else None

        method = scope.get("method", "")

        def record(verdict: Any, body: bytes | None = None) -> None:
            self._recorder.record(started, verdict, peer, method, body)

        headers = scope.get("headers") or []
        try:
            first = self._native("check_headers")(method, headers)
        except Exception:
            log.exception("toolctx: the header check could not run; request refused")
            await _answer(send, self._internal_error(record))
            return
        if first.outcome == "pass":
            record(first)
            await _without_context(self.app, _forwarded(scope, first.upstream), receive, send)
            return
        if first.outcome == "reject":
            record(first)
            await _answer(send, first)
            return
        body = await _read_body(receive, self.verifier.max_body_bytes)
        try:
            verdict = await self._decide(first, body)
        except Exception:
            log.exception("toolctx: the verifier could not run; request refused")
            await _answer(send, self._internal_error(record))
            return
        record(verdict, body)
        if verdict.outcome == "reject":
            await _answer(send, verdict)
            return
        replay = _replaying(body, receive)
        scope = _forwarded(scope, verdict.upstream)
        if verdict.outcome == "pass":
            await _without_context(self.app, scope, replay, send)
            return
        context = verdict.context
        state = dict(scope.get("state") or {})
        state[AIVAX_SCOPE_KEY if self._aivax else SCOPE_KEY] = context
        scope["state"] = state
        if isinstance(context, AivaxContext):
            aivax_token = _current_aivax.set(context)
            try:
                await self.app(scope, replay, send)
            finally:
                _current_aivax.reset(aivax_token)
            return
        token = _current.set(context)
        try:
            await self.app(scope, replay, send)
        finally:
            _current.reset(token)

    def _internal_error(self, record: Callable[[Any], None]) -> Any:
        """The core's ``internal_error`` refusal, rendered as the verifier renders refusals (and recorded)."""
        try:
            reject = self.verifier.refuse("internal_error")
        except Exception:  # a verifier that cannot run may not render either
            reject = refuse("internal_error")
        record(reject)
        return reject

    async def _decide(self, first: ReadBody | AivaxReadBody, body: bytes) -> Any:
        if isinstance(self.verifier, AivaxVerifier):
            if not isinstance(first, AivaxReadBody):
                raise RuntimeError("the header check gave no AivaxReadBody")
            # bcrypt takes milliseconds: off the event loop (the core releases the GIL).
            return await _in_thread(self._native("verify_body"), first, body)
        if not isinstance(first, ReadBody):
            raise RuntimeError("the header check gave no ReadBody")
        now = self.clock() if self.clock is not None else None
        if self.verifier.has_shared_replay_store:
            # The shared store is a network call: never on the event loop.
            return await _in_thread(self._native("verify_body"), first, body, now)
        return self._native("verify_body")(first, body, now)


async def _without_context(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Runs ``app`` for a request that passed: no verified context, whatever
    the context variables held. A server may start the next request of a
    kept-alive connection inside the task of the one before (uvicorn does,
    when its response ends), and that task's variables are copied into it:
    a call passed without context must not read the previous call's."""
    token, aivax_token = _current.set(None), _current_aivax.set(None)
    try:
        await app(scope, receive, send)
    finally:
        _current_aivax.reset(aivax_token)
        _current.reset(token)


def _forwarded(scope: Scope, upstream: Upstream) -> Scope:
    """A copy of ``scope`` with the core's ``upstream`` applied to its headers."""
    scope = dict(scope)
    if upstream:
        scope["headers"] = upstream.apply(scope.get("headers") or [])
    return scope


async def _read_body(receive: Receive, limit: int) -> bytes:
    """The body, or its first ``limit + 1`` bytes when it is longer (enough
    for the core to refuse it as too large without reading the rest)."""
    chunks = []
    size = 0
    while True:
        message = await receive()
        kind = message.get("type")
        if kind == "http.disconnect":
            raise _Disconnected
        if kind != "http.request":
            continue
        chunk = message.get("body") or b""
        chunks.append(chunk)
        size += len(chunk)
        if size > limit or not message.get("more_body", False):
            return b"".join(chunks)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app the body already read, then the real one."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _answer(send: Send, reject: Any) -> None:
    body = reject.body.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": reject.status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        import anyio.to_thread
    except ImportError:  # plain asyncio without anyio
        import asyncio

        return await asyncio.to_thread(fn, *args)
    return await anyio.to_thread.run_sync(fn, *args)
