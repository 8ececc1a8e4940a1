"""The lists the Python package writes again rather than reading from the
core: the server helpers' names are the npm package's (one set of rules,
CONTRACT §5 and §7), so they are compared with its sources. The core's own
lists (reasons, configuration codes, claims) and the result limits and
progress rule (``toolctx._native``) come from the binding and are checked
in test_api.py and test_helpers.py."""

from __future__ import annotations

import re
from pathlib import Path

from toolctx import TUIX_HEADERS
from toolctx.helpers import HELPER_ERROR_CODES, OUTCOMES, REPLAYED

NPM = Path(__file__).resolve().parents[2] / "npm" / "src"


def union(path: str, name: str) -> tuple[str, ...]:
    m = re.search(rf"export type {name} =\s*([^;]+);", (NPM / path).read_text())
    assert m is not None, name
    return tuple(re.findall(r"'([a-z_]+)'", m.group(1)))


def test_idempotency_outcomes_and_marker_are_the_npm_packages() -> None:
    assert OUTCOMES == union("idempotency.ts", "IdempotencyOutcome")
    assert f"export const REPLAYED = '{REPLAYED}';" in (NPM / "idempotency.ts").read_text()


def test_helper_error_codes_are_the_npm_packages() -> None:
    npm = union("errors.ts", "ToolctxErrorCode")
    assert set(HELPER_ERROR_CODES) <= set(npm), set(HELPER_ERROR_CODES) - set(npm)


def test_tuix_headers_are_the_npm_packages() -> None:
    text = (NPM / "tuix.ts").read_text()
    found = dict(re.findall(r"^\s+(\w+): '(X-[\w-]+)',", text, re.M))
    assert {k: v.lower() for k, v in found.items()} == dict(TUIX_HEADERS)
