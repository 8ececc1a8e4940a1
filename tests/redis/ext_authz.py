"""`toolctx serve ext-authz` behind a real Envoy (the tests/ext-authz
harness) on a topology of tests/redis/topology.py: two replicas sharing
the store address as their replay guard (a token accepted by one is
refused token_replayed by the other, the upstream saw it once), and
addresses the service must refuse at start (exit 2, the reason, no
password). Used by tests/redis/rust.py when ENVOY is set."""

from __future__ import annotations

import os
import secrets
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "ext-authz"))
import authz  # noqa: E402
from authz import harness  # noqa: E402

sys.path.insert(0, harness.HERE)
from e2e import INSTANCE, SECRET, Upstream, call_body, claims, mcp_headers, mint, rpc_error, send  # noqa: E402

ENV = {"TOOLCTX_SECRET": SECRET}
# The service built by scripts/test-redis-rust (as shipped).
BINARY = os.environ.get("TOOLCTX_BIN") or os.path.join(harness.ROOT, "target", "debug", "toolctx")


def _config(prefix: str) -> dict:
    return {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"],
            "replay_guard": {"redis_url_env": "TOOLCTX_REDIS_URL", "redis_key_prefix": prefix}}


def replicas(name: str, address: str, check) -> None:
    """Two replicas on `address` behind one Envoy."""
    prefix = "toolctx:jti:e2e-%s:" % secrets.token_hex(4)
    env = dict(ENV, TOOLCTX_REDIS_URL=address)
    ports = harness.free_ports(8)
    upstream = Upstream(ports[0])
    services = [authz.Service(_config(prefix), env, binary=BINARY, ports=(ports[1 + 2 * i], ports[2 + 2 * i]))
                for i in range(2)]
    envoy = None
    try:
        for s in services:
            s.start()
        layout = [(ports[5 + i], s.port, authz.DEFAULT_MAX_BODY_BYTES) for i, s in enumerate(services)]
        envoy, admin = authz.envoy_with(layout, upstream.port, admin_port=ports[7])
        envoy.start(admin)
        r1, r2 = ports[5], ports[6]
        c = claims()
        h, b = mcp_headers(mint(c), credential=None), call_body(c)
        before = upstream.count()
        s1, _, _ = send(r1, h, b)
        s2, _, reply2 = send(r2, h, b)
        check("%s: ext_authz behind Envoy: accepted by one replica, refused token_replayed by the other, "
              "the upstream saw it once" % name,
              s1 == 200 and s2 == 401 and rpc_error(reply2)[2] == "token_replayed"
              and upstream.count() == before + 1, (s1, s2, reply2[:160]))
        c2 = claims()
        s, _, _ = send(r2, mcp_headers(mint(c2), credential=None), call_body(c2))
        check("%s: ext_authz: a new token is accepted by the other replica" % name, s == 200, s)
        logs = "".join(s.text() for s in services)
        check("%s: ext_authz: the logs hold no password" % name,
              all(p not in logs for p in _passwords(address)), logs[-300:])
    finally:
        if envoy:
            envoy.stop()
        for s in services:
            s.stop()
        harness.stop(upstream.proc)


def refused(name: str, address: str, says: str, check) -> None:
    """The service refuses `address` at start: exit 2, `says`, no password."""
    code, text = authz.run_once(_config("toolctx:jti:"), dict(ENV, TOOLCTX_REDIS_URL=address), binary=BINARY)
    check("%s: ext_authz refuses to start (exit 2, %r, no password)" % (name, says),
          code == 2 and says in text and all(p not in text for p in _passwords(address)), (code, text[-300:]))


def _passwords(address: str) -> list[str]:
    rest = address.split("://", 1)[-1]
    if "@" not in rest:
        return []
    userinfo = rest.rsplit("@", 1)[0]
    return [userinfo.split(":", 1)[-1]]
