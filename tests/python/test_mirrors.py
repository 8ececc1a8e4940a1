"""The lists the Python package writes again rather than reading from the
core: the result limits' names and numbers are the npm package's (one
set of rules, CONTRACT §5 and §7), so they are compared with its sources;
the idempotency helper's rules are the core's (the helper vectors,
tests/python/helpers).
The core's own lists (reasons, configuration codes, claims) come from the
binding and are checked in test_api.py."""

from __future__ import annotations

import re
from pathlib import Path

from typing import get_args

from toolctx import TUIX_HEADERS, _native
from toolctx.helpers import HELPER_ERROR_CODES, LIMIT_CODES, LIMITS, OUTCOMES, Outcome

NPM = Path(__file__).resolve().parents[2] / "npm" / "src"


def union(path: str, name: str) -> tuple[str, ...]:
    m = re.search(rf"export type {name} =\s*([^;]+);", (NPM / path).read_text())
    assert m is not None, name
    return tuple(re.findall(r"'([a-z_]+)'", m.group(1)))


def test_limit_codes_and_numbers_are_the_npm_packages() -> None:
    assert LIMIT_CODES == union("results.ts", "LimitCode")
    text = (NPM / "results.ts").read_text()
    numbers = {k: eval(v) for k, v in re.findall(r"^\s+(textChars|structuredChars|imageBytes|images): ([\d *]+),", text, re.M)}
    assert numbers == {"textChars": LIMITS["text_chars"], "structuredChars": LIMITS["structured_chars"], "imageBytes": LIMITS["image_bytes"], "images": LIMITS["images"]}
    types = re.search(r"imageTypes: Object\.freeze\(\[([^\]]+)\]", text)
    assert types is not None and tuple(re.findall(r"'([^']+)'", types.group(1))) == LIMITS["image_types"]


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
