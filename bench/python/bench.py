#!/usr/bin/env python3
"""toolctx in Python against PyJWT, one request, side by side (not a test).

    .tools/venv/bin/python bench/python/bench.py [--rounds 7] [--calls 20000]

Both sides verify the same valid `tools/call` as the core's benchmark (the
request of crates/fixture: every optional claim, a 756-byte body) with the
same HS256 token:

- toolctx: `Verifier.verify(method, headers, body, now=...)`, the wheel
  installed in .tools/venv (the core in Rust, the interpreter released around
  it), down to a typed `Context`;
- PyJWT: `jwt.decode` (HS256, `aud`, `iss`, `exp`/`iat` required, 30 s
  leeway) and the `_meta` binding written in Python: `json.loads` of the body,
  the method and shape, the `tool` claim, the protocol major, the
  idempotency key composition, and every `agentarea/*` key against its claim
  and back. This is the least a hand-written verifier must do, and it still
  lacks what the contract's precise points demand (duplicate members, float
  dates, canonical base64, depth): PyJWT accepts those.

A third side, HS256 by hand with the standard library (hmac, base64, json)
and the same binding, shows where PyJWT's time goes: most of it is its
per-character base64url alphabet check, written in Python.

The rounds alternate the sides; each side's figure is the median of its
rounds (microseconds per call). Also printed: the cost of the binding itself
(a `tools/list` that the core passes after parsing), and the wheel's size.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import statistics
import sys
import time
from pathlib import Path

import jwt

import toolctx

INSTANCE = "0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f"
SECRET = "bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz"
TOOL = "search_documents"
KEY = SECRET.encode()
LISTING = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'


def request(iat: int) -> tuple[list[tuple[str, str]], bytes]:
    """The fixture's call, its token issued at ``iat`` (PyJWT reads the system clock for ``exp``)."""
    claims = toolctx.Claims(
        instance_id=INSTANCE,
        tool=TOOL,
        jti="2c5e7a4e-1f2b-4c3d-9e8f-0a1b2c3d4e5f",
        iat=iat,
        protocol="1",
        task_id="6f1c9a52-7d3e-4b8a-9c2f-1e0d3b5a7c9e",
        tool_call_id="call_Xk92bLq0vTzR4mNp",
        workspace_id="1b2e4c6d-8f0a-4b2c-9d4e-6f8a0b2c4d6e",
        agent_id="9d4a1c3e-5b7d-4f9a-8c2e-4a6b8d0f2c4e",
        end_user_id="user-42@example.com",
        metadata={"chatId": "c-9f3b2a", "channel": "web", "locale": "en-GB", "plan": "team", "tags": ["beta", "eu"]},
    )
    body = (
        '{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"' + TOOL + '","arguments":'
        '{"query":"quarterly revenue by region","limit":25,"filters":{"year":2026,"types":["pdf","xlsx"]},'
        '"cursor":"eyJvZmZzZXQiOjUwfQ"},"_meta":{"progressToken":17,' + claims.meta_json()[1:] + "}}"
    ).encode()
    return [("content-type", "application/json"), ("x-agentarea-context", claims.mint(SECRET))], body


CONTEXT_CLAIMS = toolctx.context_claims()
PREFIX = toolctx.META_PREFIX


class Refused(Exception):
    pass


def pyjwt_verify(method: str, headers: list[tuple[str, str]], body: bytes, now: int, decode=None) -> dict:
    """The same decision as far as PyJWT and Python take it."""
    if method != "POST":
        raise Refused("pass")
    tokens = [v for k, v in headers if k.lower() == "x-agentarea-context"]
    if len(tokens) != 1:
        raise Refused("token_missing" if not tokens else "token_duplicated")
    message = json.loads(body)
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        raise Refused("pass")
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("name"), str):
        raise Refused("invalid_params")
    meta = params.get("_meta") or {}
    if not isinstance(meta, dict):
        raise Refused("invalid_params")
    if decode is not None:
        claims = decode(tokens[0], now)
    else:
        claims = jwt.decode(
        tokens[0],
        SECRET,
        algorithms=["HS256"],
        audience=INSTANCE,
        issuer="agentarea",
        leeway=30,
        options={"require": ["exp", "iat", "iss", "aud"]},
        )
    if now - claims["iat"] > 600 + 30:
        raise Refused("token_too_old")
    for name in ("protocol", "task_id", "tool_call_id", "workspace_id", "idempotency_key"):
        if not isinstance(claims.get(name), str):
            raise Refused("context_malformed")
    if claims["idempotency_key"] != f"{claims['task_id']}:{claims['tool_call_id']}":
        raise Refused("context_malformed")
    if "tool" in claims and claims["tool"] != params["name"]:
        raise Refused("tool_mismatch")
    if int(claims["protocol"].split(".")[0]) != 1:
        raise Refused("protocol_unsupported")
    for key, value in meta.items():
        if key.startswith(PREFIX):
            name = key[len(PREFIX):]
            if name not in claims:
                raise Refused("claim_missing")
            if claims[name] != value:
                raise Refused("meta_mismatch")
    for name in CONTEXT_CLAIMS:
        if name in claims and PREFIX + name not in meta:
            raise Refused("meta_missing")
    return claims


def stdlib_decode(token: str, now: int) -> dict:
    """HS256 by hand with the standard library: what PyJWT does without its
    per-character alphabet check (and without any of the strict points)."""
    head, payload, sig = token.split(".")
    pad = lambda s: s + "=" * (-len(s) % 4)  # noqa: E731
    if json.loads(base64.urlsafe_b64decode(pad(head))).get("alg") != "HS256":
        raise Refused("alg_not_allowed")
    mac = hmac.new(KEY, f"{head}.{payload}".encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(mac, base64.urlsafe_b64decode(pad(sig))):
        raise Refused("signature_invalid")
    claims = json.loads(base64.urlsafe_b64decode(pad(payload)))
    if claims.get("iss") != "agentarea" or claims.get("aud") != INSTANCE:
        raise Refused("issuer_invalid")
    if now >= claims["exp"] + 30 or claims["iat"] > now + 30:
        raise Refused("token_expired")
    return claims


def timed(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()

    verifier = toolctx.Verifier(INSTANCE, [SECRET])
    now = int(time.time())
    headers, body = request(now - 5)
    # Both sides must accept the request before they are timed, or nothing is measured.
    accepted = verifier.verify("POST", headers, body, now=now)
    assert accepted.outcome == "accept", accepted
    assert pyjwt_verify("POST", headers, body, now)["task_id"] == accepted.context.task_id
    assert pyjwt_verify("POST", headers, body, now, stdlib_decode)["task_id"] == accepted.context.task_id
    token = headers[1][1]

    sides = {
        "toolctx (Verifier.verify)": lambda: verifier.verify("POST", headers, body, now),
        "PyJWT decode + _meta binding in Python": lambda: pyjwt_verify("POST", headers, body, now),
        "stdlib HS256 by hand + the same binding": lambda: pyjwt_verify("POST", headers, body, now, stdlib_decode),
        "toolctx binding floor (tools/list, passed)": lambda: verifier.verify("POST", headers, LISTING, now),
    }
    results: dict[str, list[float]] = {k: [] for k in sides}
    for _ in range(args.rounds):
        for name, fn in sides.items():
            results[name].append(timed(fn, args.calls))
    print(f"Python {sys.version.split()[0]}, toolctx core {toolctx.CORE_VERSION}, PyJWT {jwt.__version__}")
    print(f"request: {len(body)}-byte body, {len(token)}-character token; {args.rounds} rounds x {args.calls} calls")
    medians = {k: statistics.median(v) for k, v in results.items()}
    for name, rounds in results.items():
        print(f"  {name:45s} median {medians[name]:7.2f} us/call  (rounds: {', '.join(f'{r:.2f}' for r in rounds)})")
    ratio = medians["PyJWT decode + _meta binding in Python"] / medians["toolctx (Verifier.verify)"]
    print(f"ratio: toolctx is {ratio:.2f}x PyJWT + binding")
    floor = medians["stdlib HS256 by hand + the same binding"] / medians["toolctx (Verifier.verify)"]
    print(f"ratio: toolctx is {floor:.2f}x the stdlib by hand (which checks far less)")
    wheels = sorted(Path(__file__).resolve().parents[2].glob("target/wheels/toolctx-*.whl"))
    for w in wheels:
        print(f"wheel: {w.name}, {w.stat().st_size} bytes")


if __name__ == "__main__":
    main()
