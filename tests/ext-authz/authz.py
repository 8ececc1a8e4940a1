"""Shared pieces of the ext_authz tests: `toolctx serve ext-authz` as a
child process, and Envoy's `envoy.filters.http.ext_authz` with the gRPC
cluster that points at it. Builds on tests/envoy/harness.py (Envoy, the
recording upstream, the raw HTTP/1.1 client). Standard library only;
everything listens on 127.0.0.1.
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "envoy"))
import harness  # noqa: E402

ROOT = harness.ROOT
# The release-feature binary, and the test-clock one (`now` from the
# x-toolctx-test-now header) for the vectors; scripts/test-ext-authz builds both.
TOOLCTX = os.environ.get("TOOLCTX_BIN") or os.path.join(ROOT, "target", "ext-authz", "toolctx")
TOOLCTX_TEST_CLOCK = os.environ.get("TOOLCTX_TEST_CLOCK_BIN") or os.path.join(
    ROOT, "target", "ext-authz", "toolctx-test-clock")
DEFAULT_MAX_BODY_BYTES = 1024 * 1024


class Service:
    """One `toolctx serve ext-authz` process on a generated configuration."""

    def __init__(self, config, env=None, binary=TOOLCTX, metrics=False, args=(), ports=None):
        """`config`: a dict (written as JSON) or the file's exact text;
        `ports`: (gRPC, metrics), taken from one harness.free_ports call with
        the test's other ports so that none is handed out twice."""
        self.dir = tempfile.mkdtemp(prefix="toolctx-ext-authz-")
        harness._tempdirs.append(self.dir)
        self.config_path = os.path.join(self.dir, "config.json")
        with open(self.config_path, "w") as f:
            f.write(config if isinstance(config, str) else json.dumps(config))
        self.log_path = os.path.join(self.dir, "service.log")
        self.port, self.metrics_port = ports or harness.free_ports(2)
        self.env = env or {}
        self.binary = binary
        self.argv = [binary, "serve", "ext-authz", "--config", self.config_path,
                     "--listen", "127.0.0.1:%d" % self.port] + list(args)
        if metrics:
            self.argv += ["--metrics", "127.0.0.1:%d" % self.metrics_port]
        self.proc = None

    def start(self, timeout=20):
        """Starts the service and waits until it listens; RuntimeError if it
        exits first (its log says why)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLCTX_")}
        env.update(self.env)
        self.log = open(self.log_path, "w")
        self.proc = harness.start(self.argv, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("service exited with %s:\n%s" % (self.proc.returncode, self.text()))
            if "ext_authz listening on" in self.text():
                return self
            time.sleep(0.02)
        raise RuntimeError("service not listening after %ss:\n%s" % (timeout, self.text()))

    def text(self):
        try:
            with open(self.log_path) as f:
                return f.read()
        except OSError:
            return ""

    def signal(self, signum=signal.SIGTERM):
        self.proc.send_signal(signum)

    def wait(self, timeout=15):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self):
        if self.proc:
            harness.stop(self.proc)

    def metrics(self):
        """The Prometheus counters: {name: value}."""
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.metrics_port, timeout=5) as r:
            text = r.read().decode()
        return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(toolctx_\w+) (\d+)$", text, re.M)}

    def verdicts(self):
        """`toolctx_verdicts_total` on /metrics: {"outcome" or "reject/<reason>": value}, zeros left out."""
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.metrics_port, timeout=5) as r:
            text = r.read().decode()
        out = {}
        for outcome, reason, value in re.findall(
                r'^toolctx_verdicts_total\{outcome="(\w+)"(?:,reason="(\w+)")?\} (\d+)$', text, re.M):
            if int(value):
                out[outcome if not reason else "reject/" + reason] = int(value)
        return out


def run_once(config, env=None, binary=TOOLCTX, timeout=10):
    """Runs the service on a configuration it should refuse: (exit code or
    None if it kept running, its output). Stops it either way."""
    s = Service(config, env, binary)
    try:
        s.start(timeout)
    except RuntimeError:
        pass
    code = s.proc.poll()
    s.stop()
    return code, s.text()


def cluster(name, port, health_check=False):
    """The gRPC (HTTP/2) cluster of one service."""
    c = {
        "name": name, "connect_timeout": "1s", "type": "STATIC",
        "typed_extension_protocol_options": {
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
                "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
                "explicit_http_config": {"http2_protocol_options": {}},
            }},
        "load_assignment": {"cluster_name": name, "endpoints": [{"lb_endpoints": [{"endpoint": {
            "address": {"socket_address": {"address": "127.0.0.1", "port_value": port}}}}]}]},
    }
    if health_check:
        # grpc.health.v1.Health, as the gateways probe it.
        c["health_checks"] = [{"timeout": "1s", "interval": "0.5s", "unhealthy_threshold": 1,
                               "healthy_threshold": 1, "grpc_health_check": {}}]
    return c


def ext_authz_filter(cluster_name, max_body_bytes=DEFAULT_MAX_BODY_BYTES, failure_mode_allow=False,
                     allow_partial_message=True, max_request_bytes=None, encode_raw_headers=True,
                     pack_as_bytes=True, with_request_body=True):
    """Envoy's ext_authz filter in front of toolctx, with the settings the
    service needs (examples/envoy-ext-authz/envoy.yaml writes the same by hand):
      - encode_raw_headers: repeated headers reach the core as sent;
      - with_request_body.pack_as_bytes: the body's exact bytes;
      - max_request_bytes = max_body_bytes + 1 with allow_partial_message:
        a body over the limit reaches the core cut to one byte past it, and
        the core refuses it with its own JSON-RPC 413 (a cut body is never
        accepted);
      - failure_mode_allow: false: no answer from toolctx, no request."""
    f = {
        "name": "envoy.filters.http.ext_authz",
        "typed_config": {
            "@type": "type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz",
            "grpc_service": {"envoy_grpc": {"cluster_name": cluster_name}, "timeout": "5s"},
            "transport_api_version": "V3",
            "failure_mode_allow": failure_mode_allow,
            "status_on_error": {"code": 503},
            "encode_raw_headers": encode_raw_headers,
            "with_request_body": {
                "max_request_bytes": max_request_bytes or max_body_bytes + 1,
                "allow_partial_message": allow_partial_message,
                "pack_as_bytes": pack_as_bytes,
            },
        },
    }
    if not with_request_body:
        del f["typed_config"]["with_request_body"]
    return f


def envoy_with(services, upstream_port, admin_port=None, custom_methods=False, filter_options=None,
               health_check=False, concurrency=1, env=None):
    """One Envoy, one listener per (listen_port, service, max_body_bytes),
    each with ext_authz pointing at its own service. Returns (Envoy, admin)."""
    admin = admin_port or harness.free_ports(1)[0]
    listeners, clusters = [], []
    for i, (port, svc_port, max_body) in enumerate(services):
        name = "authz_%d" % i
        clusters.append(cluster(name, svc_port, health_check))
        f = ext_authz_filter(name, max_body, **(filter_options or {}))
        limit = max(2 * 1024 * 1024, max_body + 1024 * 1024)
        listeners.append(harness.listener("l%d" % i, port, [f], limit, custom_methods=custom_methods))
    boot = harness.bootstrap(admin, listeners, upstream_port)
    boot["static_resources"]["clusters"] += clusters
    return harness.Envoy(boot, env=env, concurrency=concurrency), admin
