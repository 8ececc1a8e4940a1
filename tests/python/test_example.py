"""examples/python-server, on both frameworks, against `toolctx
conformance` (the command line, built by scripts/test-python): every case
passes, exit 0; the batch without tools/call, which toolctx passes on and
the Python MCP SDK itself refuses (JSON-RPC batches left MCP in
2025-06-18), passes as the SDK's own refusal with its note (nothing ran):
the test proves the refusal is the SDK's by sending the same batch to the
unprotected server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from conftest import INSTANCE, SECRET, free_port

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "target" / "debug" / "toolctx"
SERVER = ROOT / "examples" / "python-server" / "server.py"
BATCH = '[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]'


def start(*flags: str) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "TOOLCTX_INSTANCE_ID": INSTANCE, "TOOLCTX_SECRET": SECRET}
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", str(free_port()), *flags],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("listening "):
        proc.kill()
        raise RuntimeError(f"the example did not start: {line!r}")
    return proc, line.split()[1]


def batch_status(url: str) -> str:
    r = httpx.post(
        url, content=BATCH, headers={"content-type": "application/json", "accept": "application/json, text/event-stream"}
    )
    return f"{r.status_code} {r.json()['error']['code']}"


@pytest.mark.parametrize("framework", [[], ["--fastmcp"]], ids=["mcp-sdk", "fastmcp"])
def test_conformance_against_the_example(framework: list[str]) -> None:
    if not CLI.exists():
        pytest.fail(f"{CLI} missing: scripts/test-python builds it (cargo build -p toolctx-cli)")
    proc, url = start(*framework)
    bare, bare_url = start("--no-verify", *framework)
    try:
        env = {**os.environ, "TOOLCTX_INSTANCE_ID": INSTANCE, "TOOLCTX_SECRET": SECRET}
        out = subprocess.run([str(CLI), "conformance", "--json", url], env=env, capture_output=True, text=True, timeout=120)
        report = json.loads(out.stdout)
        assert out.returncode == 0 and report["failed"] == 0, out.stdout
        assert report["probe"] is True and report["passed"] >= 30, out.stdout
        noted = [c for c in report["cases"] if c["note"] is not None]
        assert [c["case"] for c in noted] == ["batch without tools/call"], noted
        batch = noted[0]
        assert batch["ok"] is True and batch["ran"] == 0, batch
        assert "refused the batch itself (400, not a toolctx refusal), nothing ran" in batch["note"], batch
        # toolctx let the batch through: the SDK behind it answers as it does alone.
        assert batch["got"] == batch_status(bare_url) == batch_status(url)
    finally:
        for p in (proc, bare):
            p.terminate()
            p.wait(10)
