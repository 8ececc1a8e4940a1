"""What an operator sees, through the real OpenTelemetry SDK (an in-memory
metric reader and span exporter, registered as the global providers after
toolctx was imported and a verifier created): every vector file's verdicts
through ``Verifier.verify`` (the AIVAX file's through ``AivaxVerifier.verify``),
counted by outcome and reason exactly as the runner judged them, each span
naming the method and tool the core read (none before the body); the ASGI middleware under uvicorn counting each request
once, passes and refusals before the body included, with spans under the
request's span and one WARNING line per refusal on ``toolctx``; the names
against the core's and the npm package's mirror; ``telemetry=False``."""

from __future__ import annotations

import asyncio
import importlib.machinery
import importlib.util
import json
import logging
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import INSTANCE, SECRET, claims
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import toolctx
from toolctx.asgi import ToolctxMiddleware
from toolctx.telemetry import NAMES

ROOT = Path(__file__).resolve().parents[2]

# Made before any provider is registered: it must record once one is.
EARLY = toolctx.Verifier(INSTANCE, [SECRET])
EARLY.verify("GET", [], b"")

READER = InMemoryMetricReader()
SPANS = InMemorySpanExporter()
_tracing = TracerProvider()
_tracing.add_span_processor(SimpleSpanProcessor(SPANS))
metrics.set_meter_provider(MeterProvider(metric_readers=[READER]))
trace.set_tracer_provider(_tracing)


def collect() -> tuple[dict[str, Any], list[Any]]:
    """The ``toolctx`` scope's metrics by name now, and the spans since the last call."""
    data = READER.get_metrics_data()
    found: dict[str, Any] = {}
    scopes = []
    for rm in data.resource_metrics if data else []:
        for sm in rm.scope_metrics:
            if sm.scope.name == "toolctx":
                scopes.append((sm.scope.name, sm.scope.version))
                for m in sm.metrics:
                    found[m.name] = m
    assert len(set(scopes)) <= 1 and all(v == toolctx.CORE_VERSION for _, v in scopes), scopes
    spans = [s for s in SPANS.get_finished_spans() if s.name == "toolctx.verify"]
    SPANS.clear()
    return found, spans


def counts(found: dict[str, Any], since: Counter[str] | None = None) -> Counter[str]:
    """``toolctx.verdicts`` as ``outcome[/reason]`` -> count (minus ``since``)."""
    out: Counter[str] = Counter()
    m = found.get("toolctx.verdicts")
    for p in m.data.data_points if m else []:
        attrs = dict(p.attributes)
        if attrs["toolctx.outcome"] == "reject":
            assert sorted(attrs) == ["toolctx.outcome", "toolctx.reason"] and attrs["toolctx.reason"]
            out[f"reject/{attrs['toolctx.reason']}"] += p.value
        else:
            assert sorted(attrs) == ["toolctx.outcome"], attrs
            out[attrs["toolctx.outcome"]] += p.value
    out.subtract(since or Counter())
    return +out


def test_names_are_the_cores() -> None:
    # npm writes its names from the core when it is built (no mirror to hold
    # to this list any more); the binding's are the core's.
    assert NAMES["verdicts"] == "toolctx.verdicts" and NAMES["prometheus_verdicts"] == "toolctx_verdicts_total"


def _durations(found: dict[str, Any]) -> dict[str, tuple[int, float]]:
    m = found.get("toolctx.check.duration")
    return {p.attributes["toolctx.outcome"]: (p.count, p.sum) for p in (m.data.data_points if m else [])}


def test_a_provider_registered_after_the_verifier_gets_its_verdicts() -> None:
    first = collect()[0]
    before, durations = counts(first), _durations(first)
    EARLY.verify("GET", [], b"")
    EARLY.verify("POST", [], b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}')
    found, spans = collect()
    assert counts(found, before) == Counter({"pass": 1, "reject/token_missing": 1})
    duration = found["toolctx.check.duration"]
    assert duration.unit == "s"
    after = _durations(found)
    for outcome in ("pass", "reject"):
        count, total = after[outcome]
        was = durations.get(outcome, (0, 0.0))
        # One check each, measured in seconds (microseconds here, not milliseconds).
        assert count == was[0] + 1 and 0 < total - was[1] < 0.1, (outcome, after[outcome], was)
    assert sorted((s.attributes["toolctx.outcome"], s.status.status_code) for s in spans) == [
        ("pass", StatusCode.UNSET),
        ("reject", StatusCode.ERROR),
    ]


def _runner() -> Any:
    loader = importlib.machinery.SourceFileLoader("toolctx_vector_runner", str(ROOT / "tests" / "python" / "vectors"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def verdict_files(vectors: Path) -> list[Path]:
    """The verdict vector files (a file that names a "format" is another one)."""
    return [p for p in sorted(vectors.glob("*.json")) if "format" not in json.loads(p.read_text(encoding="utf-8"))]


def test_every_vector_file_is_counted_by_outcome_and_reason(capsys: pytest.CaptureFixture[str]) -> None:
    runner = _runner()
    before = counts(collect()[0])
    tally: dict[str, Any] = {"passed": 0, "failed": 0, "failures": [], "broken": []}
    judged: Counter[str] = Counter()
    vectors = ROOT / "tests" / "vectors"
    for path in [*verdict_files(vectors), *sorted((vectors / "conventions").glob("*.json"))]:
        runner.run_file(str(path), tally)
        file = json.loads(path.read_text())
        # What the runner judged: the cases that reached a verdict, as expected.
        for case in file["cases"]:
            expect = case.get("expect") or {}
            outcome = expect.get("outcome")
            # A case with expect.forward is sent twice: to Verifier.verify
            # (AivaxVerifier.verify), then through the ASGI middleware (two
            # requests, each counted once).
            sent = 2 if "forward" in expect else 1
            if outcome == "reject":
                judged[f"reject/{expect['reason']}"] += sent
            elif outcome in ("accept", "pass"):
                judged[outcome] += sent
    assert tally["failed"] == 0 and not tally["broken"], tally["failures"][:5]
    found, spans = collect()
    seen = counts(found, before)
    with capsys.disabled():
        print(f"\nvectors: {tally['passed']} passed; runner {sum(judged.values())} verdicts {dict(sorted(judged.items()))}")
        print(f"vectors: SDK toolctx.verdicts {dict(sorted(seen.items()))}; spans {len(spans)}")
    assert seen == judged
    assert len(spans) == sum(judged.values())
    for s in spans:
        refused = s.attributes["toolctx.outcome"] == "reject"
        assert s.status.status_code == (StatusCode.ERROR if refused else StatusCode.UNSET)
        assert ("toolctx.reason" in s.attributes) == refused
        if s.attributes["toolctx.outcome"] == "accept":
            assert s.attributes["mcp.method.name"] == "tools/call"
            # AgentArea's accepted calls carry their task and workspace; AIVAX's have none.
            assert ("toolctx.task_id" in s.attributes) == ("toolctx.workspace_id" in s.attributes)
    tasks = sum("toolctx.task_id" in s.attributes for s in spans)
    aivax = json.loads((vectors / "conventions" / "aivax.json").read_text())["cases"]
    aivax_accepts = sum((2 if "forward" in c["expect"] else 1) for c in aivax if c["expect"].get("outcome") == "accept")
    assert tasks == judged["accept"] - aivax_accepts > 0


# Refused before the body was read (credential, size), and refused as not one strict JSON request.
BEFORE_BODY = {"credential_missing", "credential_invalid", "body_too_large"}
NOT_ONE_REQUEST = {"parse_error", "duplicate_member", "too_deep", "batch_with_tools_call"}


def expected_names(method: str, body: bytes, verdict: Any) -> tuple[str | None, str | None]:
    """The method and tool a verdict's span must name: the body's ``method``
    and a ``tools/call``'s ``params.name``, where the core read one strict
    JSON request (``json.loads`` reads such a body as the core does)."""
    reason = verdict.reason if verdict.outcome == "reject" else None
    if method != "POST" or reason in BEFORE_BODY or reason in NOT_ONE_REQUEST:
        return None, None
    doc = json.loads(body)

    def short(v: Any) -> str | None:
        return v if isinstance(v, str) and len(v.encode("utf-8", "surrogatepass")) <= 256 else None

    if not isinstance(doc, dict):
        return None, None
    rpc = short(doc.get("method"))
    params = doc.get("params") if rpc == "tools/call" and isinstance(doc.get("params"), dict) else {}
    return rpc, short(params.get("name"))


def test_every_vector_case_names_the_method_and_tool_the_core_read(capsys: pytest.CaptureFixture[str]) -> None:
    runner = _runner()
    collect()
    named: Counter[str] = Counter()
    wrong = []
    vectors = ROOT / "tests" / "vectors"
    for path in [*verdict_files(vectors), vectors / "conventions" / "aivax.json"]:
        file = runner.read_json(path.read_text(encoding="utf-8"))
        aivax = file.get("profile") == "aivax"
        for case in file["cases"]:
            config = runner.merged(file, case)
            method, headers, body = runner.request(case)
            try:
                if aivax:
                    verdict = runner.make_verifier(config, toolctx.AivaxVerifier, runner.AIVAX_OPTIONS).verify(method, headers, body)
                else:
                    nows = (runner.plain(case.get("now")), runner.plain(file.get("now")))
                    now = next((n for n in nows if isinstance(n, int) and not isinstance(n, bool)), 0)
                    verdict = runner.make_verifier(config, toolctx.Verifier, runner.OPTIONS).verify(method, headers, body, now=now)
            except toolctx.ConfigError:
                continue
            span = SPANS.get_finished_spans()[-1]
            got = (span.attributes.get("mcp.method.name"), span.attributes.get("gen_ai.tool.name"))
            want = expected_names(method, body, verdict)
            if got != want:
                wrong.append(f"{path.name}: {case.get('name')}: {got}, expected {want}")
            named[f"{verdict.outcome} {got[0] or '-'} {'-' if got[1] is None else 'tool'}"] += 1
    collect()
    with capsys.disabled():
        print(f"\nvectors: spans by outcome, mcp.method.name and tool {dict(sorted(named.items()))}")
    assert wrong == []
    # The files hold passes that name their method, and refusals before the body that name nothing.
    assert named["pass tools/list -"] > 0 and named["pass - -"] > 0 and named["reject - -"] > 0
    assert named["reject tools/call tool"] > 0 and named["accept tools/call tool"] > 0


async def _app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _through_middleware(verifier: Any, method: str, body: bytes) -> list[Any]:
    """One request to /mcp from 127.0.0.1 through the ASGI middleware over
    ``verifier``: the messages it sent."""
    sent: list[Any] = []

    async def receive() -> Any:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": "/mcp", "headers": [], "client": ("127.0.0.1", 5)}
    asyncio.run(ToolctxMiddleware(_app, verifier)(scope, receive, send))
    return sent


def _with_parent_span(app: Any, parents: list[str]) -> Any:
    tracer = trace.get_tracer("test")

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        with tracer.start_as_current_span("http") as span:
            parents.append(format(span.get_span_context().span_id, "016x"))
            await app(scope, receive, send)

    return wrapped


#: What the middleware test's requests' spans and events name, in order: outcome or reason, method, tool.
MIX_NAMES = [
    ("pass", None, None),
    ("pass", "tools/list", None),
    ("credential_invalid", None, None),
    ("token_missing", "tools/call", "get_order"),
    ("accept", "tools/call", "get_order"),
    ("signature_invalid", "tools/call", "get_order"),
]


def test_the_middleware_counts_each_request_once_with_logs_and_parent_spans(serve: Any, caplog: pytest.LogCaptureFixture) -> None:
    verifier = toolctx.Verifier(INSTANCE, [SECRET], credential={"header": "x-api-key", "values": ["k"]})
    events: list[toolctx.VerdictEvent] = []
    parents: list[str] = []
    app = _with_parent_span(ToolctxMiddleware(_app, verifier, on_verdict=events.append), parents)
    server = serve(app)
    c = claims("get_order")
    token = c.mint(SECRET)
    body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "get_order", "arguments": {}, "_meta": c.meta()}})
    before = counts(collect()[0])
    sent = [
        ("GET", {}, None, "pass"),
        ("POST", {"x-api-key": "k"}, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', "pass"),
        ("POST", {"x-api-key": "nope"}, body, "reject/credential_invalid"),
        ("POST", {"x-api-key": "k"}, body, "reject/token_missing"),
        ("POST", {"x-api-key": "k", "x-agentarea-context": token}, body, "accept"),
        ("POST", {"x-api-key": "k", "x-agentarea-context": token + "x"}, body, "reject/signature_invalid"),
    ]
    caplog.set_level(logging.WARNING, logger="toolctx")
    with httpx.Client(base_url=server.url) as client:
        for method, headers, content, _ in sent:
            client.request(method, "/mcp", headers=headers, content=content)
    found, spans = collect()
    assert counts(found, before) == Counter(key for *_, key in sent)
    assert len(spans) == len(sent) == len(events)
    assert {format(s.parent.span_id, "016x") for s in spans if s.parent} == set(parents) and all(s.parent for s in spans)
    accepted = next(s for s in spans if s.attributes["toolctx.outcome"] == "accept")
    assert accepted.attributes["gen_ai.tool.name"] == "get_order" and accepted.attributes["toolctx.workspace_id"] == "ws-1"
    # Sent one by one, in order: the method and tool the core read, on
    # passes and refusals after the body; nothing on a GET or a refusal on
    # the credential.
    names = [
        (s.attributes.get("toolctx.reason", s.attributes["toolctx.outcome"]), s.attributes.get("mcp.method.name"), s.attributes.get("gen_ai.tool.name"))
        for s in sorted(spans, key=lambda s: s.start_time)
    ]
    assert names == MIX_NAMES
    assert [(e.reason or e.outcome, e.method, e.tool) for e in events] == MIX_NAMES
    refusals = [r for r in caplog.records if r.name == "toolctx" and r.levelno == logging.WARNING]
    assert sorted((r.reason, r.status, r.peer, r.tool) for r in refusals) == [  # type: ignore[attr-defined]
        ("credential_invalid", 401, "127.0.0.1", None),
        ("signature_invalid", 401, "127.0.0.1", "get_order"),
        ("token_missing", 401, "127.0.0.1", "get_order"),
    ]
    assert sorted(" ".join(w for w in r.getMessage().split() if w.startswith("tool=")) for r in refusals) == [
        'tool="get_order"',
        'tool="get_order"',
        "tool=null",
    ]
    assert next(r for r in refusals if r.reason == "signature_invalid").request_id == 5  # type: ignore[attr-defined]
    logged = " ".join(r.getMessage() + repr(r.__dict__) for r in refusals)
    for secret in (SECRET, token, "nope"):
        assert secret not in logged
    assert {e.entry for e in events} == {"middleware"}


def test_telemetry_false_records_nothing_but_on_verdict_and_the_log_still_hear() -> None:
    events: list[toolctx.VerdictEvent] = []
    v = toolctx.Verifier(INSTANCE, [SECRET], telemetry=False, on_verdict=events.append)
    before = counts(collect()[0])
    v.verify("GET", [], b"")
    v.verify("POST", [], b'{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"t"}}')
    found, spans = collect()
    assert counts(found, before) == Counter() and spans == []
    assert [(e.outcome, e.reason, e.status, e.request_id, e.method, e.tool, e.entry) for e in events] == [
        ("pass", None, None, None, None, None, "verify"),
        ("reject", "token_missing", 401, "x", "tools/call", "t", "verify"),
    ]
    # The middleware defaults to the verifier's settings.
    sent = _through_middleware(v, "GET", b"")
    assert sent[0]["status"] == 200 and [(e.outcome, e.entry, e.peer) for e in events[2:]] == [("pass", "middleware", "127.0.0.1")]
    assert collect()[1] == []
    with pytest.raises(TypeError):
        toolctx.Verifier(INSTANCE, [SECRET], on_verdict="no")  # type: ignore[arg-type]


def test_an_aivax_verifier_called_directly_records_as_a_verifier_does(caplog: pytest.LogCaptureFixture) -> None:
    events: list[toolctx.VerdictEvent] = []
    v = toolctx.AivaxVerifier("aivax-hook-key-5f1c9e2a", require_nonce=False, on_verdict=events.append)
    before = counts(collect()[0])
    caplog.set_level(logging.WARNING, logger="toolctx")
    v.verify("GET", [], b"")
    v.verify("POST", [], b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    # AIVAX's context names no tool: the core reads it from the body.
    v.verify("POST", [], b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather"}}')
    v.verify("POST", [], b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","_meta":{"_aiv_moment":5}}}')
    first = v.check_headers("POST", [])
    assert isinstance(first, toolctx.AivaxReadBody)
    v.verify_body(first, b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_weather","_meta":{"_aiv_moment":5}}}')
    found, spans = collect()
    assert counts(found, before) == Counter({"pass": 2, "accept": 1, "reject/context_malformed": 2})
    names = [(s.attributes.get("toolctx.reason", s.attributes["toolctx.outcome"]), s.attributes.get("mcp.method.name"), s.attributes.get("gen_ai.tool.name")) for s in spans]
    assert names == [
        ("pass", None, None),
        ("pass", "tools/list", None),
        ("accept", "tools/call", "get_weather"),
        ("context_malformed", "tools/call", "get_weather"),
        ("context_malformed", "tools/call", "get_weather"),
    ]
    assert [(e.entry, e.reason or e.outcome, e.method, e.tool, e.request_id) for e in events] == [
        ("verify", "pass", None, None, None),
        ("verify", "pass", "tools/list", None, None),
        ("verify", "accept", "tools/call", "get_weather", 2),
        ("verify", "context_malformed", "tools/call", "get_weather", 3),
        ("verify", "context_malformed", "tools/call", "get_weather", 4),
    ]
    refusals = [r for r in caplog.records if r.name == "toolctx" and r.levelno == logging.WARNING]
    assert [(r.reason, r.tool, r.request_id) for r in refusals] == [("context_malformed", "get_weather", 3), ("context_malformed", "get_weather", 4)]  # type: ignore[attr-defined]
    # The tool is the caller's text: written as JSON, a line break in it stays on the line.
    v.verify("POST", [], b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"a\\nb","_meta":{"_aiv_moment":5}}}')
    line = caplog.records[-1].getMessage()
    assert "\n" not in line and 'tool="a\\nb"' in line and caplog.records[-1].tool == "a\nb"  # type: ignore[attr-defined]
    events.pop()
    collect()
    # The middleware over it counts each request once (the verifier's own recording stays out).
    before = counts(collect()[0])
    sent = _through_middleware(v, "POST", b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_weather"}}')
    found, spans = collect()
    assert sent[0]["status"] == 200 and counts(found, before) == Counter({"accept": 1}) and len(spans) == 1
    assert (spans[0].attributes["mcp.method.name"], spans[0].attributes["gen_ai.tool.name"]) == ("tools/call", "get_weather")
    assert [(e.entry, e.outcome, e.tool) for e in events[5:]] == [("middleware", "accept", "get_weather")]
    with pytest.raises(TypeError):
        toolctx.AivaxVerifier("k", on_verdict="no")  # type: ignore[arg-type]
