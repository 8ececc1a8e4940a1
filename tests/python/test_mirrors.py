"""The lists the Python package writes again rather than reading from the
core: the server helpers' names and numbers are the npm package's (one
set of rules, CONTRACT §5 and §7), so they are compared with its sources.
The core's own lists (reasons, configuration codes, claims) come from the
binding and are checked in test_api.py."""

from __future__ import annotations

import re
from pathlib import Path

from toolctx import TUIX_HEADERS
from toolctx.helpers import LIMIT_CODES, LIMITS, OUTCOMES, REPLAYED

NPM = Path(__file__).resolve().parents[2] / "npm" / "src"


def union(path: str, name: str) -> tuple[str, ...]:
    m = re.search(rf"export type {name} = ([^;]+);", (NPM / path).read_text())
    assert m is not None, name
    return tuple(re.findall(r"'([a-z_]+)'", m.group(1)))


def test_limit_codes_and_numbers_are_the_npm_packages() -> None:
    assert LIMIT_CODES == union("results.ts", "LimitCode")
    text = (NPM / "results.ts").read_text()
    numbers = {k: eval(v) for k, v in re.findall(r"^\s+(textChars|structuredChars|imageBytes|images): ([\d *]+),", text, re.M)}
    assert numbers == {"textChars": LIMITS["text_chars"], "structuredChars": LIMITS["structured_chars"], "imageBytes": LIMITS["image_bytes"], "images": LIMITS["images"]}
    types = re.search(r"imageTypes: Object\.freeze\(\[([^\]]+)\]", text)
    assert types is not None and tuple(re.findall(r"'([^']+)'", types.group(1))) == LIMITS["image_types"]


def test_idempotency_outcomes_and_marker_are_the_npm_packages() -> None:
    assert OUTCOMES == union("idempotency.ts", "IdempotencyOutcome")
    assert f"export const REPLAYED = '{REPLAYED}';" in (NPM / "idempotency.ts").read_text()


def test_tuix_headers_are_the_npm_packages() -> None:
    text = (NPM / "tuix.ts").read_text()
    found = dict(re.findall(r"^\s+(\w+): '(X-[\w-]+)',", text, re.M))
    assert {k: v.lower() for k, v in found.items()} == dict(TUIX_HEADERS)
