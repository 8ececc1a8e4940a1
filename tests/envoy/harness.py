"""Shared pieces of the Envoy tests: free ports, an Envoy process that is
always stopped, a recording upstream, and a raw HTTP/1.1 client.

Standard library only. Everything listens on 127.0.0.1.
"""

import atexit
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# tests/support/ports.py: the one port picker of the Python tests.
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "support"))
import ports  # noqa: E402

_children = []
_tempdirs = []


def _stop_all(*_):
    for p in list(_children):
        stop(p)
    if not os.environ.get("TOOLCTX_ENVOY_KEEP_LOG"):
        for d in _tempdirs:
            shutil.rmtree(d, ignore_errors=True)


def _on_signal(signum, _frame):
    _stop_all()
    sys.exit(128 + signum)


atexit.register(_stop_all)
signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGINT, _on_signal)


def stop(p):
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if p in _children:
        _children.remove(p)


def start(argv, **kw):
    """Starts a child process that this process stops on any exit. Envoy's
    parent-death signal also stops it if this process is killed outright."""
    p = subprocess.Popen(argv, **kw)
    _children.append(p)
    return p


def free_ports(n):
    return ports.free_ports(n)


# Which toolctx front end the tests drive: the proxy-wasm filter, or with
# `--module` on any test's command line the native dynamic module
# (crates/envoy-module). The option is taken out of sys.argv here, so each
# test reads its own arguments as before.
FRONT = "filter"
if "--module" in sys.argv[1:]:
    sys.argv.remove("--module")
    FRONT = "module"

# The builds (tests/envoy/build.sh), by variant: what ships, `now` from a
# request header, a panic on request.
ARTIFACTS = {
    "filter": {"release": "toolctx_envoy.wasm", "test_clock": "toolctx_envoy_test_clock.wasm",
               "test_crash": "toolctx_envoy_test_crash.wasm"},
    "module": {"release": "libtoolctx_envoy_module.so", "test_clock": "libtoolctx_envoy_module_test_clock.so",
               "test_crash": "libtoolctx_envoy_module_test_crash.so"},
}
# Where Envoy puts each front end's custom counters in /stats.
COUNTER_NAMESPACE = {"filter": "wasmcustom.", "module": "dynamicmodulescustom."}
# ... and in /stats/prometheus (Envoy strips its wasm namespace there, not
# the dynamic modules' one).
PROMETHEUS_PREFIX = {"filter": "", "module": "envoy_dynamicmodulescustom_"}


def artifact(variant="release"):
    """The built filter or module of `variant`; TOOLCTX_ENVOY_WASM (or
    TOOLCTX_ENVOY_MODULE) names another release build."""
    override = os.environ.get("TOOLCTX_ENVOY_MODULE" if FRONT == "module" else "TOOLCTX_ENVOY_WASM")
    if override and variant == "release":
        return os.path.abspath(override)
    return os.path.join(ROOT, "target", "envoy", ARTIFACTS[FRONT][variant])


def private_copy(path, workdir):
    """A copy of the filter or module in `workdir` (same file name): a
    rebuild during a long run must not change what Envoy loads."""
    out = os.path.join(workdir, os.path.basename(path))
    shutil.copy(path, out)
    return out


def toolctx_filter(path, plugin_config, env_keys):
    """The toolctx HTTP filter stanza for the front end under test: the
    wasm filter at `path`, or the dynamic module at `path`."""
    if FRONT == "module":
        return module_filter(path, plugin_config)
    return wasm_filter(path, plugin_config, env_keys)


def module_filter(so_path, plugin_config, filter_name="toolctx"):
    """The toolctx dynamic module as Envoy configuration
    (examples/envoy-module/envoy.yaml is the same thing written by hand):
    Envoy loads lib<name>.so from ENVOY_DYNAMIC_MODULES_SEARCH_PATH, which
    Envoy.start sets to the module's folder. `plugin_config` is a dict
    (written as JSON) or the configuration's exact text."""
    name = os.path.basename(so_path)
    if not (name.startswith("lib") and name.endswith(".so")):
        raise ValueError("a dynamic module is lib<name>.so, not %s" % name)
    return {
        "name": "envoy.filters.http.dynamic_modules",
        "typed_config": {
            "@type": "type.googleapis.com/envoy.extensions.filters.http.dynamic_modules.v3.DynamicModuleFilter",
            "dynamic_module_config": {"name": name[3:-3]},
            "filter_name": filter_name,
            "filter_config": {
                "@type": "type.googleapis.com/google.protobuf.StringValue",
                "value": plugin_config if isinstance(plugin_config, str) else json.dumps(plugin_config),
            },
        },
    }


def module_env(path):
    """The environment Envoy needs to find the module at `path` (nothing
    for the wasm filter, whose path is in the configuration)."""
    if FRONT != "module":
        return {}
    return {"ENVOY_DYNAMIC_MODULES_SEARCH_PATH": os.path.dirname(os.path.abspath(path))}


def envoy_binary():
    env = os.environ.get("ENVOY")
    if not env:
        sys.exit("ENVOY is not set (scripts/test-envoy sets it through ensure_envoy)")
    return env


class Envoy:
    """One Envoy process on a generated configuration."""

    def __init__(self, config, env=None, workdir=None, concurrency=1):
        """`config`: a dict (written as JSON) or YAML text."""
        self.dir = workdir or tempfile.mkdtemp(prefix="toolctx-envoy-")
        _tempdirs.append(self.dir)
        self.config_path = os.path.join(self.dir, "envoy.json" if isinstance(config, dict) else "envoy.yaml")
        self.log_path = os.path.join(self.dir, "envoy.log")
        with open(self.config_path, "w") as f:
            json.dump(config, f, indent=1) if isinstance(config, dict) else f.write(config)
        self.admin = None
        self.env = dict(env or {})
        if FRONT == "module" and "ENVOY_DYNAMIC_MODULES_SEARCH_PATH" not in self.env:
            self.env.update(module_env(artifact()))
        self.concurrency = concurrency
        self.proc = None

    def start(self, admin_port, timeout=30):
        self.admin = admin_port
        env = dict(os.environ)
        env.update(self.env)
        self.log = open(self.log_path, "w")
        self.proc = start(
            [envoy_binary(), "-c", self.config_path, "--disable-hot-restart", "-l", "warning",
             "--component-log-level", "wasm:info,dynamic_modules:info", "--concurrency", str(self.concurrency)],
            env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("envoy exited with %s:\n%s" % (self.proc.returncode, self.tail()))
            try:
                if self.get("/ready").strip() == "LIVE":
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("envoy not ready after %ss:\n%s" % (timeout, self.tail()))

    def get(self, path):
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.admin, path), timeout=5) as r:
            return r.read().decode("utf-8", "replace")

    def stats(self, prefix):
        """Envoy's integer stats whose names start with `prefix`, by name."""
        out = {}
        query = urllib.parse.quote("^" + prefix.replace(".", "\\."), safe="")
        for line in self.get("/stats?filter=" + query).splitlines():
            name, _, value = line.partition(": ")
            if value.strip().isdigit():
                out[name.strip()] = int(value)
        return out

    def counters(self):
        """The toolctx counters, by name (`toolctx.accepted`, ...), without
        the namespace Envoy puts them in for the front end under test."""
        space = COUNTER_NAMESPACE[FRONT]
        return {name[len(space):]: n for name, n in self.stats(space + "toolctx.").items()}

    def tail(self, n=40):
        try:
            with open(self.log_path) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def stop(self):
        if self.proc:
            stop(self.proc)


class Redis:
    """Debian's redis-server on 127.0.0.1 (REDIS_SERVER: another binary), no
    persistence; stopped by the test, or with the harness at exit."""

    def __init__(self, port=None):
        self.port = port or free_ports(1)[0]
        binary = os.environ.get("REDIS_SERVER") or "redis-server"
        self.proc = start([binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                       "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                if self.command("PING") == b"+PONG\r\n":
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def command(self, *args):
        """One command on a connection of its own; the raw reply."""
        out = b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in args)
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
            s.sendall(out)
            return s.recv(4096)

    def signal(self, sig):
        self.proc.send_signal(sig)

    def kill(self):
        self.proc.kill()
        self.proc.wait()
        stop(self.proc)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
        stop(self.proc)


def starts(envoy, admin_port, timeout=15):
    """Starts `envoy` on a configuration it should refuse, and stops it
    again either way: whether it became ready (its log is still there)."""
    try:
        envoy.start(admin_port, timeout=timeout)
        return True
    except RuntimeError:
        return False
    finally:
        envoy.stop()


def wasm_filter(wasm_path, plugin_config, env_keys):
    """The toolctx HTTP filter as Envoy configuration (examples/envoy/envoy.yaml
    is the same thing written by hand)."""
    return {
        "name": "envoy.filters.http.wasm",
        "typed_config": {
            "@type": "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm",
            "config": {
                "name": "toolctx",
                "root_id": "toolctx",
                # Required: hold the headers while the body is read.
                "allow_on_headers_stop_iteration": True,
                "failure_policy": "FAIL_CLOSED",
                "vm_config": {
                    "vm_id": "toolctx",
                    "runtime": "envoy.wasm.runtime.v8",
                    "code": {"local": {"filename": wasm_path}},
                    "environment_variables": {"host_env_keys": sorted(env_keys)},
                },
                "configuration": {
                    "@type": "type.googleapis.com/google.protobuf.StringValue",
                    "value": json.dumps(plugin_config),
                },
            },
        },
    }


def listener(name, port, http_filters, buffer_limit=2 * 1024 * 1024, custom_methods=False):
    return {
        "name": name,
        "address": {"socket_address": {"address": "127.0.0.1", "port_value": port}},
        "per_connection_buffer_limit_bytes": buffer_limit,
        "filter_chains": [{"filters": [{
            "name": "envoy.filters.network.http_connection_manager",
            "typed_config": {
                "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
                "stat_prefix": name,
                # Test runner only: let methods Envoy does not know (`post`)
                # reach the filter, which passes them untouched.
                "http_protocol_options": {"allow_custom_methods": custom_methods},
                "route_config": {"virtual_hosts": [{
                    "name": "all", "domains": ["*"],
                    "routes": [{"match": {"prefix": "/"}, "route": {"cluster": "upstream"}}],
                }]},
                "http_filters": http_filters + [{
                    "name": "envoy.filters.http.router",
                    "typed_config": {"@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"},
                }],
            },
        }]}],
    }


def bootstrap(admin_port, listeners, upstream_port):
    return {
        "admin": {"address": {"socket_address": {"address": "127.0.0.1", "port_value": admin_port}}},
        "static_resources": {
            "listeners": listeners,
            "clusters": [{
                "name": "upstream", "connect_timeout": "2s", "type": "STATIC",
                "per_connection_buffer_limit_bytes": 2 * 1024 * 1024,
                # Idle upstream connections are closed by Envoy before Node's
                # 5 s keep-alive closes them under a request about to be
                # sent (after a slow bcrypt call that race answered 503).
                "typed_extension_protocol_options": {"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
                    "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
                    "common_http_protocol_options": {"idle_timeout": "3s"},
                    "explicit_http_config": {"http_protocol_options": {}}}},
                "load_assignment": {"cluster_name": "upstream", "endpoints": [{"lb_endpoints": [{"endpoint": {
                    "address": {"socket_address": {"address": "127.0.0.1", "port_value": upstream_port}}}}]}]},
            }],
        },
    }


class Recorder:
    """An upstream that records every request and answers 200 with a marker."""

    MARKER = b'{"upstream":"reached"}'

    def __init__(self):
        self.requests = []
        self.lock = threading.Lock()
        rec = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self):
                n = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(n) if n else b""
                if self.headers.get("transfer-encoding", "").lower() == "chunked":
                    body = _read_chunked(self.rfile)
                with rec.lock:
                    rec.requests.append({"method": self.command, "path": self.path,
                                         "headers": list(self.headers.items()), "body": body})
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(Recorder.MARKER)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(Recorder.MARKER)

            def __getattr__(self, name):
                # Any method, `post` and custom ones included.
                if name.startswith("do_"):
                    return self._any
                raise AttributeError(name)

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def seen(self, path):
        with self.lock:
            return [r for r in self.requests if r["path"] == path]

    def close(self):
        self.server.shutdown()


def _read_chunked(f):
    out = b""
    while True:
        size = int(f.readline().split(b";")[0], 16)
        if size == 0:
            while f.readline() not in (b"\r\n", b"\n", b""):
                pass
            return out
        out += f.read(size)
        f.readline()


def raw_request(port, method, path, headers, body, timeout=10):
    """Sends exactly these headers (duplicates kept, order kept) and body
    bytes; returns (status, headers, body)."""
    lines = ["%s %s HTTP/1.1" % (method, path), "host: 127.0.0.1:%d" % port]
    for n, v in headers:
        lines.append("%s: %s" % (n, v))
    if body or method not in ("GET", "HEAD", "DELETE", "OPTIONS"):
        lines.append("content-length: %d" % len(body))
    lines.append("connection: close")
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + body
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        resp = http.client.HTTPResponse(s, method=method)
        resp.begin()
        payload = resp.read()
        return resp.status, [(k.lower(), v) for k, v in resp.getheaders()], payload
