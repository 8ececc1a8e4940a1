"""Every Python block of crates/python/README.md runs as it is, each in a
fresh namespace (not as __main__, so the blocks that serve only build their
app), and each app block gives an ASGI app."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "crates" / "python" / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_has_a_block_per_entry_point() -> None:
    text = "\n".join(BLOCKS)
    for entry in ("Verifier(", "check_headers", "MemoryReplay", "ToolctxMiddleware", "protect(", "middleware(", "Claims(", "idempotent", "progress(", "qualified_tool_name", "AivaxVerifier"):
        assert entry in text, entry


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_block_runs(block: str) -> None:
    namespace: dict = {"__name__": "readme"}
    exec(compile(block, str(README), "exec"), namespace)
    if "app" in namespace:
        assert callable(namespace["app"])
