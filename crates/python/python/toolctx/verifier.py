"""``toolctx.Verifier`` and ``toolctx.AivaxVerifier``: the native verifiers,
recording each verdict of ``verify``, ``check_headers`` (a pass or a
refusal on the headers) and ``verify_body`` (``toolctx.telemetry``). The
ASGI middleware records the requests it checks itself and calls the native
methods, so a request is counted once."""

from __future__ import annotations

from typing import Any, TypeVar

from toolctx import _native
from toolctx.telemetry import OnVerdict, Recorder, Started

#: What ``verify_body`` was handed the body of: a ``ReadBody`` is only ever
#: given for a POST (step 0), and the core's description of the request
#: takes the HTTP method.
_READ_BODY_METHOD = "POST"

# The native methods are called through their classes, not super(): a
# zero-argument super() builds a proxy object on every call.

_V = TypeVar("_V")


def _recorded(recorder: Recorder, started: Started, verdict: _V, method: str | None = None, body: Any = None) -> _V:
    """Records a verdict and hands it back. A ReadBody from check_headers is
    not this request's verdict yet (verify_body gives it), so it is not."""
    if getattr(verdict, "outcome", None) != "read_body":
        recorder.record(started, verdict, None, method, body)
    return verdict


class Verifier(_native.Verifier):
    """``Verifier(instance_id, secrets, *, ..., on_verdict=None, telemetry=True)``:
    the native ``Verifier``'s settings, plus ``on_verdict`` (called with a
    ``VerdictEvent`` per verdict) and ``telemetry`` (``False``: no metrics
    or spans even with OpenTelemetry installed; refusals are still logged)."""

    _recorder: Recorder

    def __new__(cls, *args: Any, on_verdict: OnVerdict | None = None, telemetry: bool = True, **kwargs: Any) -> Verifier:
        self = super().__new__(cls, *args, **kwargs)
        self._recorder = Recorder(on_verdict, telemetry, "verify")
        return self

    def verify(self, method: str, headers: Any, body: Any, now: int | None = None) -> _native.Pass | _native.Accept | _native.Reject:
        started = self._recorder.start()
        return _recorded(self._recorder, started, _native.Verifier.verify(self, method, headers, body, now), method, body)

    def check_headers(self, method: str, headers: Any) -> _native.Pass | _native.Reject | _native.ReadBody:
        started = self._recorder.start()
        return _recorded(self._recorder, started, _native.Verifier.check_headers(self, method, headers))

    def verify_body(self, read_body: _native.ReadBody, body: Any, now: int | None = None) -> _native.Pass | _native.Accept | _native.Reject:
        started = self._recorder.start()
        return _recorded(self._recorder, started, _native.Verifier.verify_body(self, read_body, body, now), _READ_BODY_METHOD, body)


class AivaxVerifier(_native.AivaxVerifier):
    """``AivaxVerifier(hook_key, *, ..., on_verdict=None, telemetry=True)``:
    the native ``AivaxVerifier``'s settings, plus ``on_verdict`` and
    ``telemetry`` as ``Verifier``'s."""

    _recorder: Recorder

    def __new__(cls, *args: Any, on_verdict: OnVerdict | None = None, telemetry: bool = True, **kwargs: Any) -> AivaxVerifier:
        self = super().__new__(cls, *args, **kwargs)
        self._recorder = Recorder(on_verdict, telemetry, "verify")
        return self

    def verify(self, method: str, headers: Any, body: Any) -> _native.Pass | _native.Accept | _native.Reject:
        started = self._recorder.start()
        return _recorded(self._recorder, started, _native.AivaxVerifier.verify(self, method, headers, body), method, body)

    def check_headers(self, method: str, headers: Any) -> _native.Pass | _native.Reject | _native.AivaxReadBody:
        started = self._recorder.start()
        return _recorded(self._recorder, started, _native.AivaxVerifier.check_headers(self, method, headers))

    def verify_body(self, read_body: _native.AivaxReadBody, body: Any) -> _native.Pass | _native.Accept | _native.Reject:
        started = self._recorder.start()
        return _recorded(self._recorder, started, _native.AivaxVerifier.verify_body(self, read_body, body), _READ_BODY_METHOD, body)
