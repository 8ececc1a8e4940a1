"""What the Python test drivers under tests/ share: a tally of named checks
that closes with the plain `N passed, N failed` line, and HS256 tokens minted
with the standard library only (never with toolctx)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, ok: bool, detail: object = "") -> None:
        if ok:
            self.passed += 1
            print(f"ok      {name}")
        else:
            self.failed += 1
            print(f"FAILED  {name}: {detail}")

    def close(self) -> int:
        """Prints the closing line; the exit status (1 on a failure or when nothing ran)."""
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed or self.passed == 0 else 0


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def mint(claims: dict, secret: str) -> str:
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = b64url(json.dumps(claims, separators=(",", ":")).encode())
    sig = hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64url(sig)}"
