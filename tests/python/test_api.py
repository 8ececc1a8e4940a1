"""The binding itself: verdicts, configuration, secrets kept out of sight,
the signing side, the replay guard, the core's name lists."""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import INSTANCE, SECRET, claims

import toolctx

ROOT = Path(__file__).resolve().parents[2]


def request(c: toolctx.Claims, tool: str = "echo", request_id=3):
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "_meta": c.meta()}}
    return [(toolctx.TOKEN_HEADER, c.mint(SECRET))], json.dumps(body).encode()


def test_accept_gives_a_frozen_typed_context(verifier) -> None:
    c = claims(metadata={"region": "eu", "n": [1, 2]}, agent_id="agent-1", iat=int(time.time()))
    headers, body = request(c)
    v = verifier.verify("POST", headers, body)
    assert v.outcome == "accept" and bool(v)
    ctx = v.context
    assert (ctx.task_id, ctx.tool_call_id, ctx.workspace_id) == ("task-1", "call-1", "ws-1")
    assert ctx.idempotency_key == "task-1:call-1" and ctx.protocol == "1" and ctx.tool == "echo"
    assert ctx.metadata == {"region": "eu", "n": [1, 2]} and ctx.request_id == 3
    assert ctx.exp == ctx.iat + 300 and ctx.secret_index == 0
    ctx.metadata["region"] = "us"
    assert ctx.metadata["region"] == "eu"  # a fresh dict on every read
    with pytest.raises(AttributeError):
        ctx.task_id = "other"  # type: ignore[misc]


def test_reject_carries_the_cores_fields(verifier) -> None:
    c = claims()
    headers, body = request(c, tool="other", request_id="req-9")
    v = verifier.verify("POST", headers, body)
    assert v.outcome == "reject" and not v
    assert (v.status, v.code, v.reason, v.id, v.id_json) == (403, -32003, "tool_mismatch", "req-9", '"req-9"')
    assert json.loads(v.body) == {
        "jsonrpc": "2.0",
        "id": "req-9",
        "error": {"code": -32003, "message": v.message, "data": {"reason": "tool_mismatch"}},
    }
    quiet = toolctx.Verifier(INSTANCE, [SECRET], include_reason=False).verify("POST", headers, body)
    assert "data" not in json.loads(quiet.body)["error"] and quiet.reason == "tool_mismatch"
    # include_reason is read by the core's settings table: None its
    # default, another type config_type (not pyo3's TypeError).
    loud = toolctx.Verifier(INSTANCE, [SECRET], include_reason=None).verify("POST", headers, body)
    assert json.loads(loud.body)["error"]["data"] == {"reason": "tool_mismatch"}
    for make in (
        lambda: toolctx.Verifier(INSTANCE, [SECRET], include_reason="no"),
        lambda: toolctx.AivaxVerifier("hook-key", include_reason=1),
        lambda: toolctx.refuse("internal_error", include_reason="yes"),
    ):
        with pytest.raises(toolctx.ConfigError) as e:
            make()
        assert e.value.code == "config_type" and "include_reason" in str(e.value)


def test_a_placeholder_left_by_a_configuration_framework_is_refused() -> None:
    for make, name in (
        (lambda: toolctx.Verifier("${TOOLCTX_INSTANCE_ID}", [SECRET]), "instance_id"),
        (lambda: toolctx.Verifier(INSTANCE, ["${TOOLCTX_SECRET}-and-padding-to-32-bytes"]), "secrets"),
        (lambda: toolctx.AivaxVerifier("${AIVAX_HOOK_KEY}"), "hook_key"),
    ):
        with pytest.raises(toolctx.ConfigError) as e:
            make()
        assert e.value.code == "config_placeholder" and f"`{name}`" in str(e.value)


def test_now_is_injected_and_must_be_an_int(verifier) -> None:
    c = claims(iat=1_767_225_600)
    headers, body = request(c)
    assert verifier.verify("POST", headers, body, now=1_767_225_700).outcome == "accept"
    assert verifier.verify("POST", headers, body, now=1_767_225_600 + 330).reason == "token_expired"
    for bad in (1_767_225_700.0, True, "1767225700"):
        with pytest.raises(TypeError):
            verifier.verify("POST", headers, body, now=bad)


def test_headers_in_every_shape_keep_duplicates(verifier) -> None:
    c = claims()
    (pair,), body = request(c)
    token = pair[1]
    assert verifier.verify("POST", {toolctx.TOKEN_HEADER: token}, body).outcome == "accept"
    assert verifier.verify("POST", [(b"X-AgentArea-Context", token.encode())], body).outcome == "accept"
    twice = [(toolctx.TOKEN_HEADER, token), (toolctx.TOKEN_HEADER, token)]
    assert verifier.verify("POST", twice, body).reason == "token_duplicated"
    import httpx

    assert verifier.verify("POST", httpx.Headers(twice), body).reason == "token_duplicated"
    with pytest.raises(TypeError):
        verifier.verify("POST", [("only-a-name",)], body)


def test_check_headers_then_body() -> None:
    v = toolctx.Verifier(INSTANCE, [SECRET], credential={"header": "authorization", "values": ["Bearer k"]})
    assert v.check_headers("GET", []).outcome == "pass"
    assert v.check_headers("POST", []).reason == "credential_missing"
    c = claims()
    headers, body = request(c)
    rb = v.check_headers("POST", [*headers, ("authorization", "Bearer k")])
    assert rb.outcome == "read_body" and rb.max_body_bytes == 1024 * 1024
    assert v.verify_body(rb, body).outcome == "accept"
    with pytest.raises(RuntimeError):
        v.verify_body(rb, body)  # one header check vouches for one body


def test_configuration_is_validated_once_and_secrets_stay_hidden() -> None:
    with pytest.raises(toolctx.ConfigError) as e:
        toolctx.Verifier(INSTANCE, ["too short"])
    assert e.value.code == "secret_length" and "too short" not in str(e.value)
    with pytest.raises(toolctx.ConfigError) as e:
        toolctx.Verifier(INSTANCE, [SECRET], clock_skew_s=True)
    assert e.value.code == "config_type"
    with pytest.raises(toolctx.ConfigError) as e:
        toolctx.Verifier("", [SECRET])
    assert e.value.code == "instance_id_empty"
    with pytest.raises(toolctx.ConfigError) as e:
        toolctx.Verifier(INSTANCE, [SECRET], max_body_bytes=0)
    assert e.value.code == "limit_out_of_range"
    v = toolctx.Verifier(INSTANCE, [SECRET], credential={"header": "authorization", "values": ["Bearer hidden-value"]})
    for text in (repr(v), str(v)):
        assert SECRET not in text and "hidden-value" not in text and "redacted" in text
    a = toolctx.AivaxVerifier("aivax-hook-key-5f1c9e2a")
    assert "aivax-hook-key" not in repr(a)


def test_signing_side_matches_the_contract() -> None:
    c = claims(iat=1_767_225_600, jti="jti-1")
    payload = c.payload()
    assert payload["iss"] == "agentarea" and payload["aud"] == INSTANCE
    assert payload["iat"] == 1_767_225_600 and payload["exp"] == 1_767_225_900
    assert isinstance(payload["iat"], int) and payload["idempotency_key"] == "task-1:call-1"
    assert c.meta() == {
        "agentarea/protocol": "1",
        "agentarea/task_id": "task-1",
        "agentarea/tool_call_id": "call-1",
        "agentarea/workspace_id": "ws-1",
        "agentarea/idempotency_key": "task-1:call-1",
    }
    header = json.loads(__import__("base64").urlsafe_b64decode(c.mint(SECRET).split(".")[0] + "=="))
    assert header == {"alg": "HS256", "typ": "JWT"}
    with pytest.raises(TypeError):
        claims(iat=time.time())  # a float date: refused here, as the verifier would
    with pytest.raises(toolctx.ConfigError):
        c.mint("short")
    assert claims().jti != claims().jti


def test_memory_replay_guard(verifier) -> None:
    v = toolctx.Verifier(INSTANCE, [SECRET], replay=toolctx.MemoryReplay(100))
    headers, body = request(claims())
    assert v.verify("POST", headers, body).outcome == "accept"
    again = v.verify("POST", headers, body)
    assert (again.status, again.reason, again.id) == (401, "token_replayed", 3)
    assert verifier.verify("POST", headers, body).outcome == "accept"  # no guard there


def test_a_failing_shared_store_refuses() -> None:
    class Broken:
        def first_use(self, jti, until, now):
            raise ConnectionError("down")

    class Yes:
        calls = []

        def first_use(self, jti, until, now):
            self.calls.append((jti, until - now))
            return True

    headers, body = request(claims())
    v = toolctx.Verifier(INSTANCE, [SECRET], replay=Broken())
    refused = v.verify("POST", headers, body)
    assert (refused.status, refused.reason, refused.id) == (500, "internal_error", 3)
    yes = Yes()
    assert toolctx.Verifier(INSTANCE, [SECRET], replay=yes).verify("POST", headers, body).outcome == "accept"
    ((jti, ttl),) = yes.calls
    assert ttl <= 330 and jti


def test_a_custom_store_answers_the_cores_four_answers() -> None:
    """A store answers a ClaimAnswer (or its name, or a bool as before); the
    core says what it means. `FULL` is replay_guard_full, never a replay."""
    want = [
        (toolctx.ClaimAnswer.FIRST_USE, "accept"),
        (toolctx.ClaimAnswer.USED, "token_replayed"),
        (toolctx.ClaimAnswer.FULL, "replay_guard_full"),
        (toolctx.ClaimAnswer.FAILED, "internal_error"),
        ("full", "replay_guard_full"),
        ("first_use", "accept"),
        (True, "accept"),
        (False, "token_replayed"),
        ("OK", "internal_error"),
        (1, "internal_error"),
        (None, "internal_error"),
    ]
    for answer, outcome in want:

        class Store:
            def first_use(self, jti: str, until: int, now: int, answer: object = answer) -> object:
                return answer

        headers, body = request(claims())
        v = toolctx.Verifier(INSTANCE, [SECRET], replay=Store())
        r = v.verify("POST", headers, body)
        assert (r.outcome if r.outcome == "accept" else r.reason) == outcome, answer
        if outcome == "replay_guard_full":
            assert (r.status, r.id) == (503, 3)
    assert [a.value for a in (toolctx.ClaimAnswer.FIRST_USE, toolctx.ClaimAnswer.FULL)] == ["first_use", "full"]
    assert toolctx.ClaimAnswer.named("used") == toolctx.ClaimAnswer.USED
    assert toolctx.ClaimAnswer.named("nonsense") == toolctx.ClaimAnswer.FAILED
    assert toolctx.MemoryReplay().capacity == toolctx.DEFAULT_REPLAY_CAPACITY == 100_000


def test_the_memory_guards_capacity_is_the_cores_to_read() -> None:
    # 0 is the core's default; 1 to 4294967295 itself.
    assert toolctx.MemoryReplay(0).capacity == 100_000
    assert toolctx.MemoryReplay(1).capacity == 1
    assert toolctx.MemoryReplay(4_294_967_295).capacity == 4_294_967_295
    # Anything else is refused with the core's code and message (a check of
    # the binding's own would answer another message).
    for refused in [-1, 4_294_967_296, 2**63, 2**100, -(2**100)]:
        with pytest.raises(toolctx.ConfigError) as e:
            toolctx.MemoryReplay(refused)
        assert (e.value.code, str(e.value)) == ("limit_out_of_range", "setting `replay_capacity` is out of range"), refused
    with pytest.raises(TypeError):
        toolctx.MemoryReplay(1.5)  # type: ignore[arg-type]


def test_a_redis_stores_timeout_is_the_cores_to_read() -> None:
    from toolctx.helpers import RedisIdempotencyStore

    assert [toolctx.redis_timeout_ms(ms) for ms in [0, 1, 1.5, 1.1 * 1000, 60_000]] == [500, 1, 2, 1100, 60_000]
    RedisIdempotencyStore(None, timeout_s=0.25)  # type: ignore[arg-type]  # the client is not touched
    for refused in [-1, 0.0004, 60.001, float("nan"), float("inf")]:
        with pytest.raises(toolctx.ConfigError) as e:
            RedisIdempotencyStore(None, timeout_s=refused)  # type: ignore[arg-type]
        assert (e.value.code, str(e.value)) == ("limit_out_of_range", "setting `store_timeout_ms` is out of range"), refused


def test_the_core_reads_a_redis_py_reply() -> None:
    read = toolctx.redis_claim_answer
    A = toolctx.ClaimAnswer
    assert [read(True), read("OK"), read(b"OK"), read(None)] == [A.FIRST_USE, A.FIRST_USE, A.FIRST_USE, A.USED]
    for odd in [False, "QUEUED", b"1", b"", 1, 0, [], 1.5, ConnectionError("down")]:
        assert read(odd) == A.FAILED, odd


def test_the_gil_is_released_while_the_core_works() -> None:
    # A cost-12 bcrypt nonce keeps the core busy for a long while. With a
    # switch interval far longer than the test, the interpreter never takes
    # the GIL from the worker: the main thread, which sleeps between counts,
    # can count while the worker's verify runs only if the binding releases
    # the GIL itself. No clock decides: the count moved, or it did not.
    import bcrypt

    hook_key = "aivax-hook-key-5f1c9e2a"
    nonce = bcrypt.hashpw(hook_key.encode(), bcrypt.gensalt(12)).decode()
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "_meta": {"_aiv_nonce": nonce}}})
    verifier = toolctx.AivaxVerifier(hook_key)
    count = [0]
    during: list[tuple[int, int]] = []
    verdicts = []

    def work() -> None:
        before = count[0]
        verdicts.append(verifier.verify("POST", [], body))
        during.append((before, count[0]))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        worker = threading.Thread(target=work)
        worker.start()
        while worker.is_alive():
            count[0] += 1
            time.sleep(0.0005)  # releases the GIL, so the worker always gets it back
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    assert verdicts[0].outcome == "accept" and verdicts[0].context.nonce_verified
    # Held, nothing else runs while the core works: the count stands still.
    before, after = during[0]
    assert after > before, (before, after)


def test_threads_verify_at_once(verifier) -> None:
    # Threads verifying at once must all finish with the right verdicts.
    headers, body = request(claims())
    out = []

    def work():
        out.append(all(verifier.verify("POST", headers, body).outcome == "accept" for _ in range(200)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [True] * 4


def test_name_lists_come_from_the_core() -> None:
    reasons = toolctx.reasons()
    # The contract's refusal table names every reason the core has (CONTRACT §3, §7).
    contract = (ROOT / "docs" / "CONTRACT.md").read_text()
    for r in reasons:
        if r not in ("nonce_missing", "nonce_invalid", "internal_error"):
            assert f"`{r}`" in contract, r
    table = {r: (s, c) for r, s, c, _ in toolctx.refusal_table()}
    assert table["token_expired"] == (401, -32001) and table["meta_mismatch"] == (403, -32003)
    assert toolctx.context_claims() == (
        "protocol", "task_id", "tool_call_id", "workspace_id", "idempotency_key", "agent_id", "end_user_id", "metadata"
    )
    # The stubs mirror the core's lists: they must say the same.
    stub = (ROOT / "crates" / "python" / "python" / "toolctx" / "_native.pyi").read_text()
    mirrored = re.search(r"Reason = Literal\[(.*?)\]", stub, re.S)
    assert mirrored is not None
    assert tuple(re.findall(r'"([a-z_]+)"', mirrored.group(1))) == reasons
    codes = re.search(r"ConfigErrorCode = Literal\[(.*?)\]", stub, re.S)
    assert codes is not None and tuple(re.findall(r'"([a-z_]+)"', codes.group(1))) == toolctx.config_error_codes()


def test_conventions() -> None:
    assert toolctx.qualified_tool_name("My GitHub!", "create_issue") == "mcp__my_github___create_issue"
    assert toolctx.server_label("My GitHub!") == "my_github_"
    assert toolctx.canonical_json({"b": 1.0, "a": [True, None]}) == '{"a":[true,null],"b":1}'
    k1 = toolctx.tuix_idempotency_key("s", "t", "tool", {"x": 1, "y": None, "z": ""})
    assert k1 == toolctx.tuix_idempotency_key("s", "t", "tool", {"x": 1}) and len(k1) == 64
    assert toolctx.TUIX_HEADERS == {"sessionId": "x-session-id", "idempotencyKey": "x-idempotency-key"}
    with pytest.raises(ValueError):
        toolctx.canonical_json(float("nan"))


def test_aivax_verifier() -> None:
    v = toolctx.AivaxVerifier("aivax-hook-key-5f1c9e2a", require_nonce=False)
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "_meta": {"_aiv_external_user_id": "u-1", "tenant": "t"}}}
    )
    a = v.verify("POST", [], body)
    assert a.outcome == "accept" and a.context.external_user_id == "u-1" and a.context.metadata == {"tenant": "t"}
    assert a.context.nonce_verified is False
    # Hashable and equal by value, as Context is.
    again = v.verify("POST", [], body).context
    assert again == a.context and hash(again) == hash(a.context) and len({a.context, again}) == 1
    with pytest.raises(toolctx.ConfigError):
        toolctx.AivaxVerifier("k", max_bcrypt_cost=99)


def test_aivax_check_headers_answers_as_the_verifiers() -> None:
    """Steps 0 and 1 first, then the body on the headers checked, as
    Verifier.check_headers and verify_body do."""
    v = toolctx.AivaxVerifier("aivax-hook-key-5f1c9e2a", require_nonce=False, credential={"header": "authorization", "values": ["Bearer k"]})
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x", "_meta": {"_aiv_external_user_id": "u-1"}}})
    assert v.check_headers("GET", []).outcome == "pass"
    refused = v.check_headers("POST", [])
    assert isinstance(refused, toolctx.Reject) and refused.reason == "credential_missing"
    rb = v.check_headers("POST", [("authorization", "Bearer k")])
    assert isinstance(rb, toolctx.AivaxReadBody) and rb.outcome == "read_body" and rb.max_body_bytes == 1024 * 1024
    accepted = v.verify_body(rb, body)
    assert isinstance(accepted, toolctx.Accept) and accepted.context == v.verify("POST", [("authorization", "Bearer k")], body).context
    with pytest.raises(RuntimeError):
        v.verify_body(rb, body)  # one header check vouches for one body


def test_what_pyjwt_accepts_and_the_core_refuses() -> None:
    """The README's claim, checked against the real PyJWT: float dates,
    duplicate members and padded base64 pass PyJWT and are refused here."""
    import base64
    import hashlib
    import hmac

    import jwt

    def b64(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def sign(payload: str, pad: bool = False) -> str:
        head, body = b64(b'{"alg":"HS256","typ":"JWT"}'), b64(payload.encode())
        if pad:
            body += "=" * (-len(body) % 4)
        mac = hmac.new(SECRET.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
        return f"{head}.{body}.{b64(mac)}"

    now = int(time.time())
    c = claims()
    context = json.loads(c.payload_json())
    base = {k: v for k, v in context.items() if k not in ("iat", "exp")}

    def payload(iat: object, exp: object, extra: str = "") -> str:
        text = json.dumps({**base, "iat": iat, "exp": exp})
        return text[:-1] + extra + "}"

    cases = {
        "claim_invalid": sign(payload(now + 0.5, now + 300.5)),
        "token_malformed": sign(payload(now, now + 300, ', "aud": "' + INSTANCE + '"')),
    }
    # Padding needs a segment whose length is not a multiple of 4: widen the JSON until it is not.
    text = payload(now, now + 300)
    while len(b64(text.encode())) % 4 == 0:
        text = text[:-1] + " }"
    cases["token_malformed (padding)"] = sign(text, pad=True)
    assert cases["token_malformed (padding)"].split(".")[1].endswith("=")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "_meta": c.meta()}})
    v = toolctx.Verifier(INSTANCE, [SECRET])
    for reason, token in cases.items():
        jwt.decode(token, SECRET, algorithms=["HS256"], audience=INSTANCE, issuer="agentarea")  # accepted
        got = v.verify("POST", [(toolctx.TOKEN_HEADER, token)], body)
        assert got.outcome == "reject" and got.reason == reason.split()[0], (reason, got)
