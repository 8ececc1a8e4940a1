#!/usr/bin/env python3
"""The Redis topologies users run at scale, started and stopped on
127.0.0.1 for the tests that share them (issue: the shared guarantees on
TLS, ACL users, Cluster and Sentinel), from Debian's `redis-server` and
throwaway `openssl` certificates:

- `TlsRedis`: one node speaking TLS only, its certificate signed by a
  throwaway CA (`ca`), client certificates optional (`client_cert`,
  `client_key`), the `default` user off and one ACL user limited to
  toolctx's keys;
- `Cluster`: 3 primaries and 3 replicas (`move_slot` moves a slot while
  calls run, `kill_primary` forces a failover);
- `Sentinel`: a primary, 2 replicas and 3 Sentinels watching it by name
  (`kill_primary`: the Sentinels promote a replica).

Each gives `address`, the store address of docs/CONTRACT.md §5.4, and
stops everything it started (also when its start fails). Standard library
only; admin commands go through `redis-cli`.

    python3 tests/redis/topology.py --self-test   # start each, check it, stop it
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from ports import free_ports  # noqa: E402

HOST = "127.0.0.1"
USER = "toolctx"
# The keys the ACL user may touch: the replay guard's and the idempotency
# helper's default prefixes (CONTRACT §5.1, §3).
KEY_PATTERNS = ("~toolctx:*",)
PRIMARY_NAME = "toolctx-primary"


def _bin(name: str) -> str:
    path = shutil.which(name)
    if not path:
        raise RuntimeError("%s not found (Debian's redis-server package)" % name)
    return path


def _wait(what: str, ok, seconds: float = 20.0, step: float = 0.1):
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        try:
            last = ok()
            if last:
                return last
        except (OSError, subprocess.SubprocessError, ValueError, LookupError) as e:
            last = e
        time.sleep(step)
    raise RuntimeError("%s: not within %.0f s (last: %r)" % (what, seconds, last))


class _Processes:
    """The servers of one topology, in a temporary directory."""

    def __init__(self, name: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="toolctx-redis-%s-" % name)
        self.procs: dict[int, subprocess.Popen] = {}

    def spawn(self, port: int, conf: str, sentinel: bool = False) -> None:
        path = os.path.join(self.dir, "%d.conf" % port)
        with open(path, "w", encoding="utf-8") as f:
            f.write(conf)
        args = [_bin("redis-server"), path] + (["--sentinel"] if sentinel else [])
        log = open(os.path.join(self.dir, "%d.log" % port), "wb")
        self.procs[port] = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=self.dir)

    def kill(self, port: int) -> None:
        p = self.procs.pop(port, None)
        if p and p.poll() is None:
            p.send_signal(signal.SIGKILL)
            p.wait()

    def stop(self) -> None:
        for port in list(self.procs):
            p = self.procs.pop(port)
            if p.poll() is None:
                p.terminate()
        time.sleep(0.1)
        shutil.rmtree(self.dir, ignore_errors=True)


def _base_conf(port: int, extra: str = "") -> str:
    return (
        "bind %s\nport %d\nsave \"\"\nappendonly no\nprotected-mode no\ndaemonize no\n"
        "dir .\ndbfilename dump-%d.rdb\n%s" % (HOST, port, port, extra)
    )


def cli(port: int, *args: str, tls: list[str] | None = None) -> str:
    """One redis-cli command on 127.0.0.1:port; its output, stripped."""
    out = subprocess.run([_bin("redis-cli"), "-h", HOST, "-p", str(port), *(tls or []), *args],
                         capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


class TlsRedis:
    """One TLS-only node with an ACL user (the `default` user off)."""

    def __init__(self) -> None:
        self.p = _Processes("tls")
        try:
            self.password = "pw-" + os.urandom(12).hex()
            (self.port,) = free_ports(1)
            self._certificates()
            acl = "user default off\nuser %s on >%s %s &* +@all\n" % (USER, self.password, " ".join(KEY_PATTERNS))
            tls = ("port 0\ntls-port %d\ntls-cert-file server.crt\ntls-key-file server.key\n"
                   "tls-ca-cert-file ca.crt\ntls-auth-clients optional\n" % self.port)
            self.p.spawn(self.port, _base_conf(0, tls + acl).replace("port 0\n", "", 1))
            _wait("TLS redis-server up", lambda: self.command("PING") == "PONG")
        except BaseException:
            self.p.stop()
            raise

    def _certificates(self) -> None:
        d, run = self.p.dir, lambda *a: subprocess.run(["openssl", *a], cwd=self.p.dir, check=True,
                                                       capture_output=True)
        run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
            "-subj", "/CN=toolctx throwaway CA", "-days", "2")
        # Both X.509 v3 (an extension each): rustls takes no v1 certificate,
        # the client's own included.
        for name, ext in (("server", "subjectAltName=IP:127.0.0.1,DNS:localhost"),
                          ("client", "extendedKeyUsage=clientAuth")):
            run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
                "-subj", "/CN=toolctx throwaway %s" % name)
            args = ["x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                    "-CAcreateserial", "-out", name + ".crt", "-days", "2"]
            if ext:
                with open(os.path.join(d, name + ".ext"), "w", encoding="utf-8") as f:
                    f.write(ext + "\n")
                args += ["-extfile", name + ".ext"]
            run(*args)
        # A second CA that signed nothing here: the wrong CA of the tests.
        run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other-ca.key", "-out",
            "other-ca.crt", "-subj", "/CN=toolctx unrelated CA", "-days", "2")
        for f in ("ca.crt", "other-ca.crt", "client.crt", "client.key"):
            setattr(self, f.replace("-", "_").replace(".", "_"), os.path.join(d, f))

    @property
    def ca(self) -> str:
        return self.ca_crt  # type: ignore[attr-defined]

    @property
    def wrong_ca(self) -> str:
        return self.other_ca_crt  # type: ignore[attr-defined]

    def address(self, password: str | None = None, client_cert: bool = False, ca: str | None = None) -> str:
        query = "ca=" + (ca or self.ca)
        if client_cert:
            query += "&cert=%s&key=%s" % (self.client_crt, self.client_key)  # type: ignore[attr-defined]
        return "rediss://%s:%s@%s:%d?%s" % (USER, password or self.password, HOST, self.port, query)

    def command(self, *args: str) -> str:
        return cli(self.port, "--user", USER, "--pass", self.password, "--no-auth-warning", *args,
                   tls=["--tls", "--cacert", self.ca])

    def stop(self) -> None:
        self.p.stop()


class Cluster:
    """3 primaries and 3 replicas (cluster-node-timeout 2 s; a replica
    takes over however long its primary has been gone)."""

    def __init__(self) -> None:
        self.p = _Processes("cluster")
        try:
            self.ports = []
            for _ in range(6):
                self.ports.append(self._node())
            out = subprocess.run([_bin("redis-cli"), "--cluster", "create",
                                  *["%s:%d" % (HOST, p) for p in self.ports],
                                  "--cluster-replicas", "1", "--cluster-yes"],
                                 capture_output=True, text=True, timeout=60)
            if out.returncode != 0:
                raise RuntimeError("redis-cli --cluster create failed: %s" % out.stdout[-500:])
            self.wait_ok()
            # Every node knows the other five in their roles (a node still in
            # handshake with another refuses a SETSLOT naming it).
            def agreed() -> bool:
                for port in self.ports:
                    lines = cli(port, "CLUSTER", "NODES").splitlines()
                    flags = [ln.split()[2] for ln in lines if len(ln.split()) > 2]
                    if (len(flags) != 6 or sum("master" in f for f in flags) != 3
                            or any(x in f for f in flags for x in ("handshake", "fail", "noaddr"))):
                        return False
                return True

            _wait("every node agrees on the 6 nodes", agreed, 30)
            # A replica that has not finished its first sync cannot take over.
            _wait("every replica in sync", lambda: all(
                "master_link_status:up" in cli(n["port"], "INFO", "replication")
                for n in self.nodes() if n["role"] == "replica"), 30)
        except BaseException:
            self.p.stop()
            raise

    def _node(self) -> int:
        """Starts one cluster node on a free port; a node that does not come
        up (its port taken meanwhile, a slow start) is replaced on another
        port, at most three times, its log shown at the last."""
        for attempt in range(3):
            (port,) = free_ports(1)
            self.p.spawn(port, _base_conf(port, "cluster-enabled yes\ncluster-config-file nodes-%d.conf\n"
                                                "cluster-node-timeout 2000\n"
                                                "cluster-replica-validity-factor 0\n" % port))
            try:
                _wait("cluster node %d up" % port, lambda: cli(port, "PING") == "PONG", 20)
                return port
            except RuntimeError:
                self.p.kill(port)
                if attempt == 2:
                    with open(os.path.join(self.p.dir, "%d.log" % port), encoding="utf-8", errors="replace") as f:
                        raise RuntimeError("cluster node %d did not start: %s" % (port, f.read()[-500:]))
        raise RuntimeError("unreachable")

    @property
    def address(self) -> str:
        return "redis-cluster://" + ",".join("%s:%d" % (HOST, p) for p in self.ports)

    def live(self) -> list[int]:
        return list(self.p.procs)

    def wait_ok(self, seconds: float = 30.0) -> None:
        _wait("cluster_state:ok on every node",
              lambda: all("cluster_state:ok" in cli(p, "CLUSTER", "INFO") for p in self.live()), seconds)

    def nodes(self) -> list[dict]:
        """CLUSTER NODES as seen by a live node: id, port, role, slots."""
        out = []
        for line in cli(self.live()[0], "CLUSTER", "NODES").splitlines():
            f = line.split()
            if len(f) < 8:
                continue
            port = int(f[1].split("@")[0].rsplit(":", 1)[1])
            role = "primary" if "master" in f[2] else "replica"
            out.append({"id": f[0], "port": port, "role": role, "failed": "fail" in f[2], "slots": f[8:]})
        return out

    def owner(self, key: str) -> int:
        """The port of the primary that serves `key` now."""
        slot = int(cli(self.live()[0], "CLUSTER", "KEYSLOT", key))
        for n in self.nodes():
            for r in n["slots"]:
                if r.startswith("["):
                    continue
                lo, _, hi = r.partition("-")
                if n["role"] == "primary" and not n["failed"] and int(lo) <= slot <= int(hi or lo):
                    return n["port"]
        raise LookupError("no primary serves slot %d" % slot)

    def move_slot(self, key: str) -> tuple[int, int]:
        """Moves the slot of `key` (with its keys) to another primary, by
        redis-cli's resharding; (from port, to port)."""
        src = self.owner(key)
        slot = cli(self.live()[0], "CLUSTER", "KEYSLOT", key)
        ids = {n["port"]: n["id"] for n in self.nodes() if n["role"] == "primary" and not n["failed"]}
        dst = next(p for p in ids if p != src)
        def setslot(port: int, state: str, peer: int) -> bool:
            reply = cli(port, "CLUSTER", "SETSLOT", slot, state, ids[peer])
            if reply != "OK":
                raise ValueError(reply)
            return True

        for port, state, peer in ((dst, "IMPORTING", src), (src, "MIGRATING", dst)):
            _wait("CLUSTER SETSLOT %s %s on %d" % (slot, state, port), lambda: setslot(port, state, peer), 10)
        for _ in range(1000):
            keys = cli(src, "CLUSTER", "GETKEYSINSLOT", slot, "100").split()
            if not keys:
                break
            moved = cli(src, "MIGRATE", HOST, str(dst), "", "0", "5000", "KEYS", *keys)
            if moved != "OK":
                raise RuntimeError("MIGRATE of slot %s answered %r" % (slot, moved))
        else:
            raise RuntimeError("slot %s still holds keys" % slot)
        for port in ids:
            cli(port, "CLUSTER", "SETSLOT", slot, "NODE", ids[dst])
        # The moved keys on dst's replica too, before anyone kills dst.
        cli(dst, "WAIT", "1", "5000")
        return src, dst

    def kill_primary(self, key: str) -> int:
        """Kills the primary serving `key` (SIGKILL); waits until a replica
        took its slots. The killed port."""
        port = self.owner(key)
        self.p.kill(port)
        _wait("a replica promoted for %s" % key, lambda: self.owner(key) != port, 30)
        return port

    def stop(self) -> None:
        self.p.stop()


class Sentinel:
    """A primary, 2 replicas and 3 Sentinels that know it as PRIMARY_NAME."""

    def __init__(self) -> None:
        self.p = _Processes("sentinel")
        try:
            self.primary, *self.replicas = free_ports(3)
            self.sentinels = free_ports(3)
            self.p.spawn(self.primary, _base_conf(self.primary))
            for port in self.replicas:
                self.p.spawn(port, _base_conf(port, "replicaof %s %d\n" % (HOST, self.primary)))
            _wait("both replicas in sync",
                  lambda: cli(self.primary, "INFO", "replication").count("state=online") == 2)
            for port in self.sentinels:
                self.p.spawn(port, "bind %s\nport %d\ndir .\nsentinel resolve-hostnames no\n"
                                   "sentinel monitor %s %s %d 2\n"
                                   "sentinel down-after-milliseconds %s 1000\n"
                                   "sentinel failover-timeout %s 5000\n"
                             % (HOST, port, PRIMARY_NAME, HOST, self.primary, PRIMARY_NAME, PRIMARY_NAME),
                             sentinel=True)
            _wait("every Sentinel sees the other two and both replicas",
                  lambda: all(self._knows_all(p) for p in self.sentinels))
        except BaseException:
            self.p.stop()
            raise

    def _knows_all(self, port: int) -> bool:
        info = cli(port, "SENTINEL", "MASTER", PRIMARY_NAME).splitlines()
        fields = dict(zip(info[::2], info[1::2]))
        return fields.get("num-other-sentinels") == "2" and fields.get("num-slaves") == "2"

    @property
    def address(self) -> str:
        return "redis-sentinel://%s#%s" % (",".join("%s:%d" % (HOST, p) for p in self.sentinels), PRIMARY_NAME)

    def primary_port(self) -> int:
        out = cli(self.sentinels[0], "SENTINEL", "GET-MASTER-ADDR-BY-NAME", PRIMARY_NAME).split()
        return int(out[1])

    def kill_primary(self) -> int:
        """Kills the primary (SIGKILL); waits until the Sentinels name a new
        one that answers as a primary. The killed port."""
        old = self.primary_port()
        self.p.kill(old)

        def promoted() -> bool:
            new = self.primary_port()
            return new != old and "role:master" in cli(new, "INFO", "replication")

        _wait("the Sentinels promoted a replica", promoted, 30)
        return old

    def stop(self) -> None:
        self.p.stop()


def self_test() -> int:
    failed = 0

    def check(name: str, ok: bool, detail: object = "") -> None:
        nonlocal failed
        failed += not ok
        print("%s - %s%s" % ("ok" if ok else "FAIL", name, "" if ok else ": %r" % (detail,)))

    t0 = time.monotonic()
    tls = TlsRedis()
    try:
        check("TLS: the ACL user is served over TLS", tls.command("SET", "toolctx:x", "1") == "OK")
        check("TLS: the user may not touch other keys", "NOPERM" in tls.command("SET", "other", "1"))
        bad = cli(tls.port, "--user", USER, "--pass", "wrong", "--no-auth-warning", "PING",
                  tls=["--tls", "--cacert", tls.ca])
        check("TLS: a wrong password is refused", "WRONGPASS" in bad or "AUTH" in bad, bad)
        wrong = cli(tls.port, "--user", USER, "--pass", tls.password, "--no-auth-warning", "PING",
                    tls=["--tls", "--cacert", tls.wrong_ca])
        check("TLS: a certificate from another CA is refused", wrong != "PONG", wrong)
        plain = cli(tls.port, "PING")
        check("TLS: plain RESP gets nothing", plain != "PONG", plain)
        check("TLS: the address", tls.address().startswith("rediss://%s:" % USER))
    finally:
        tls.stop()
    t1 = time.monotonic()
    cluster = Cluster()
    try:
        primaries = [n for n in cluster.nodes() if n["role"] == "primary"]
        check("cluster: 3 primaries, 3 replicas", len(primaries) == 3 and len(cluster.nodes()) == 6)
        key = "toolctx:jti:self-test"
        owner = cluster.owner(key)
        check("cluster: a key is served by its slot's primary", cli(owner, "SET", key, "1") == "OK")
        other = next(p for p in cluster.ports if p != owner and p in [n["port"] for n in primaries])
        check("cluster: another primary redirects (MOVED)", cli(other, "GET", key).startswith("MOVED"))
        src, dst = cluster.move_slot(key)
        check("cluster: the slot moved with its key", cluster.owner(key) == dst and cli(dst, "GET", key) == "1")
        killed = cluster.kill_primary(key)
        cluster.wait_ok()
        check("cluster: a replica took over the killed primary's slots",
              cluster.owner(key) != killed and cli(cluster.owner(key), "GET", key) == "1")
    finally:
        cluster.stop()
    t2 = time.monotonic()
    sentinel = Sentinel()
    try:
        primary = sentinel.primary_port()
        check("sentinel: the Sentinels name the primary", primary == sentinel.primary)
        cli(primary, "SET", "toolctx:jti:s", "1")
        check("sentinel: WAIT counts 2 replicas", cli(primary, "WAIT", "2", "1000") == "2")
        sentinel.kill_primary()
        new = sentinel.primary_port()
        check("sentinel: a replica was promoted and has the key",
              new != primary and cli(new, "GET", "toolctx:jti:s") == "1")
    finally:
        sentinel.stop()
    t3 = time.monotonic()
    print("took: TLS %.1f s, cluster %.1f s, sentinel %.1f s" % (t1 - t0, t2 - t1, t3 - t2))
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:] != ["--self-test"]:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        sys.exit(2)
    sys.exit(self_test())
