"""The lists the Python package writes again rather than reading from the
core: the server helpers' names are the npm package's where the Python
package writes them again (one set of rules, CONTRACT §5 and §7), so they
are compared with its sources. The idempotency rules, the result limits and
the progress rule are the core's (the helper vectors, tests/python/helpers;
``toolctx._native``); the core's own lists (reasons, configuration codes,
claims) come from the binding and are checked in test_api.py."""

from __future__ import annotations

import re
from pathlib import Path

from typing import get_args

from toolctx import TUIX_HEADERS, _native
from toolctx.helpers import HELPER_ERROR_CODES, OUTCOMES, Outcome

NPM = Path(__file__).resolve().parents[2] / "npm" / "src"


def union(path: str, name: str) -> tuple[str, ...]:
    m = re.search(rf"export type {name} =\s*([^;]+);", (NPM / path).read_text())
    assert m is not None, name
    return tuple(re.findall(r"'([a-z_]+)'", m.group(1)))


def test_idempotency_outcome_type_is_the_cores() -> None:
    # The idempotency rules are the core's (tests/python/helpers runs the
    # helper vectors); only the typing Literal is written here again.
    assert get_args(Outcome) == OUTCOMES == tuple(_native.IDEMPOTENCY_OUTCOMES)


def test_helper_error_codes_are_the_npm_packages() -> None:
    npm = union("errors.ts", "ToolctxErrorCode")
    assert set(HELPER_ERROR_CODES) <= set(npm), set(HELPER_ERROR_CODES) - set(npm)


def test_tuix_headers_are_the_npm_packages() -> None:
    text = (NPM / "tuix.ts").read_text()
    found = dict(re.findall(r"^\s+(\w+): '(X-[\w-]+)',", text, re.M))
    assert {k: v.lower() for k, v in found.items()} == dict(TUIX_HEADERS)
