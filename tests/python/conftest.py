"""Shared fixtures: a secret and verifier, the platform side (claims, a
token per call), a real uvicorn server on 127.0.0.1 in a thread, and a
redis-server on 127.0.0.1 started and stopped by the tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

import toolctx

# tests/support/ports.py: the one port picker of the Python tests.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
import ports  # noqa: E402

INSTANCE = "0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f"
SECRET = "a test secret of at least thirty-two bytes, for toolctx"


def claims(tool: str | None = "echo", *, task_id: str = "task-1", tool_call_id: str = "call-1", **kw: Any) -> toolctx.Claims:
    return toolctx.Claims(
        instance_id=INSTANCE,
        task_id=task_id,
        tool_call_id=tool_call_id,
        workspace_id="ws-1",
        tool=tool,
        **kw,
    )


@pytest.fixture
def verifier() -> toolctx.Verifier:
    return toolctx.Verifier(INSTANCE, [SECRET])


def free_port() -> int:
    return ports.free_port()


class Server:
    """An ASGI app served by uvicorn on 127.0.0.1 in a thread."""

    def __init__(self, app: Any) -> None:
        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="auto")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[Server] = []

    def start(app: Any) -> Server:
        s = Server(app).__enter__()
        started.append(s)
        return s

    yield start
    for s in started:
        s.__exit__()


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A redis-server of its own on 127.0.0.1; skipped when there is none,
    unless TOOLCTX_REQUIRE_REDIS=1 (scripts/test-python), where it fails."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("TOOLCTX_REQUIRE_REDIS") == "1":
            pytest.fail("redis-server is required (TOOLCTX_REQUIRE_REDIS=1)")
        pytest.skip("no redis-server")
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="toolctx-redis-")
    proc = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no", "--dir", workdir],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)
