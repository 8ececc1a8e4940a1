"""The platform's side of a call over the official SDK's client: a fresh
token in X-AgentArea-Context for every tools/call, `_meta` from the same
claims (per-request headers through an httpx2 event hook)."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

import toolctx


class Platform:
    """Holds the token the next request carries."""

    def __init__(self) -> None:
        self.token: str | None = None
        self.sent: list[dict] = []

    async def on_request(self, request: httpx2.Request) -> None:
        if request.method == "POST" and self.token is not None:
            try:
                message = json.loads(request.content)
            except ValueError:
                message = None
            if isinstance(message, dict) and message.get("method") == "tools/call":
                request.headers[toolctx.TOKEN_HEADER] = self.token
                self.sent.append(message)

    async def call(
        self, session: ClientSession, name: str, arguments: dict, claims: toolctx.Claims | None, secret: str, **kw: Any
    ) -> Any:
        meta = None
        if claims is not None:
            self.token = claims.mint(secret)
            meta = claims.meta()
        else:
            self.token = None
        if "extra_meta" in kw:
            meta = {**(meta or {}), **kw.pop("extra_meta")}
        return await session.call_tool(name, arguments, meta=meta, **kw)


@asynccontextmanager
async def connect(url: str):
    platform = Platform()
    async with httpx2.AsyncClient(event_hooks={"request": [platform.on_request]}, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session, platform
