#!/usr/bin/env python3
"""Generate the store address vectors (tests/vectors/store-address.json):
for addresses of every shape the grammar of docs/CONTRACT.md §5.4 admits
(one node, TLS with a CA and a client certificate, ACL users, a cluster's
seeds, a Sentinel set with its primary, durable claims) and of many it
refuses, what the core reads, or its refusal; and for what a front end
whose client lacks TLS, Cluster, Sentinel or WAIT must refuse.

Standard library only; never imports or runs project code: the parser
below is this file's own reading of the grammar.

    python3 tests/vectors/generate_store_address.py           # rewrite the file
    python3 tests/vectors/generate_store_address.py --check   # exit 1 if it differs

File format (docs/VECTORS.md, "Store address vectors"):

    {"format": "toolctx-store-address", "description": ...,
     "cases": [{"name", "address", "supports"?: ["tls", "cluster", "sentinel", "wait"],
                "expect": {"address": {...}} | {"error", "message"}}]}

`supports` absent: a client that does everything. The read address is
{"topology", "primary"?, "tls": null | {"ca", "cert", "key"}, "nodes":
[{"host", "port"}], "user", "password", "db", "wait": null | {"replicas",
"timeout_ms"}, "redacted"}. tests/vectors/selfcheck_store_address.py reads
every address a second way.
"""

import os
import re
import sys
import urllib.parse

import vectorfile

HERE = os.path.dirname(os.path.abspath(__file__))
FILE = "store-address.json"
FORMAT = "toolctx-store-address"

SCHEMES = {
    "redis": (False, "single"), "rediss": (True, "single"),
    "redis-cluster": (False, "cluster"), "rediss-cluster": (True, "cluster"),
    "redis-sentinel": (False, "sentinel"), "rediss-sentinel": (True, "sentinel"),
}
SCHEME_LIST = ("redis://, rediss://, redis-cluster://, rediss-cluster://, "
               "redis-sentinel:// or rediss-sentinel://")
STORE_TIMEOUT_MS, MAX_STORE_TIMEOUT_MS = 500, 60_000
MAX_DB, MAX_REPLICAS = 1_000_000, 64
HOST_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._")


class Refused(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


def invalid(why):
    return Refused("store_address_invalid", "the store address is invalid: " + why)


def decode(text, what):
    out, i = bytearray(), 0
    while i < len(text):
        if text[i] == "%":
            h = text[i + 1:i + 3]
            if len(h) != 2 or any(c not in "0123456789abcdefABCDEF" for c in h):
                raise invalid("a bad %%-escape in %s" % what)
            out.append(int(h, 16))
            i += 3
        else:
            out += text[i].encode("utf-8")
            i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise invalid("%s is not UTF-8" % what)


def digits(text, lo, hi):
    if not text or len(text) > 12 or any(c not in "0123456789" for c in text):
        return None
    n = int(text)
    return n if lo <= n <= hi else None


def node(text, default_port):
    if text.startswith("["):
        if "]" not in text:
            raise invalid("an unclosed [ in a host")
        host, after = text[1:].split("]", 1)
        if not host or ":" not in host or any(c not in "0123456789abcdefABCDEF:." for c in host):
            raise invalid("a host in brackets must be an IPv6 address")
        if after == "":
            port = None
        elif after.startswith(":"):
            port = after[1:]
        else:
            raise invalid("junk after a host")
    else:
        host, port = (text.split(":", 1) + [None])[:2] if ":" in text else (text, None)
        if not host:
            raise invalid("a node names no host")
        if any(c not in HOST_CHARS for c in host):
            raise invalid("a host holds a character a host name cannot")
    if port is None:
        port = default_port
    else:
        port = digits(port, 1, 65535)
        if port is None:
            raise invalid("a port must be 1 to 65535")
    return {"host": host.lower(), "port": port}


def shown(name):
    return name if len(name) <= 32 and re.fullmatch(r"[A-Za-z0-9_]*", name) else "(not shown)"


def params(query, given):
    tls = {"ca": None, "cert": None, "key": None}
    wait = {}
    if given and query == "":
        raise invalid("an empty query after ?")
    for pair in (query.split("&") if given else []):
        if "=" not in pair:
            raise invalid("a query parameter without =")
        name, value = pair.split("=", 1)
        value = decode(value, "a query parameter")
        if value == "":
            raise invalid("`%s` is empty" % shown(name))
        if name in tls:
            slot = tls
        elif name in ("wait_replicas", "wait_timeout_ms"):
            slot = wait
        else:
            raise invalid("unknown query parameter `%s`" % shown(name))
        if slot.get(name) is not None:
            raise invalid("`%s` is given twice" % name)
        slot[name] = value
    if (tls["cert"] is None) != (tls["key"] is None):
        raise invalid("cert and key go together")
    if not wait:
        return tls, None
    if "wait_replicas" not in wait:
        raise invalid("wait_timeout_ms needs wait_replicas")
    replicas = digits(wait["wait_replicas"], 1, MAX_REPLICAS)
    if replicas is None:
        raise invalid("wait_replicas must be 1 to %d" % MAX_REPLICAS)
    timeout = STORE_TIMEOUT_MS // 2
    if "wait_timeout_ms" in wait:
        timeout = digits(wait["wait_timeout_ms"], 1, MAX_STORE_TIMEOUT_MS)
        if timeout is None:
            raise invalid("wait_timeout_ms must be 1 to %d" % MAX_STORE_TIMEOUT_MS)
    return tls, {"replicas": replicas, "timeout_ms": timeout}


def parse(text):
    if "${" in text and "}" in text[text.index("${"):]:
        raise Refused("config_placeholder", "the store address holds an unresolved placeholder "
                      "`${...}`: set the variable it names")
    if any(ord(c) <= 32 or ord(c) == 127 for c in text):
        raise invalid("it holds a space or a control character")
    if "://" not in text or text.split("://", 1)[0] not in SCHEMES:
        raise invalid("it must start with " + SCHEME_LIST)
    scheme, rest = text.split("://", 1)
    tls_on, topology = SCHEMES[scheme]
    primary = None
    if "#" in rest:
        rest, primary = rest.split("#", 1)
        primary = decode(primary, "the primary's name")
    query, given = "", False
    if "?" in rest:
        rest, query = rest.split("?", 1)
        given = True
    auth = None
    if "@" in rest:
        auth, rest = rest.rsplit("@", 1)
    db_text = None
    if "/" in rest:
        rest, db_text = rest.split("/", 1)
    default_port = 26379 if topology == "sentinel" else 6379
    nodes = [node(n, default_port) for n in rest.split(",")]
    if topology == "single" and len(nodes) > 1:
        raise invalid("several nodes need redis-cluster:// or redis-sentinel://")
    if db_text in (None, ""):
        db = 0
    else:
        db = digits(db_text, 0, MAX_DB)
        if db is None:
            raise invalid("the database must be a number from 0 to %d" % MAX_DB)
    if topology == "cluster" and db != 0:
        raise invalid("a Redis Cluster has database 0 only")
    user = password = None
    if auth is not None:
        if ":" not in auth:
            raise invalid("a user needs a password (user:password@)")
        u, p = auth.split(":", 1)
        u, p = decode(u, "the user"), decode(p, "the password")
        if p == "":
            raise invalid("the password is empty")
        user, password = (u or None), p
    if topology == "sentinel" and not primary:
        raise invalid("a Sentinel address names its primary after # (redis-sentinel://host#name)")
    if topology != "sentinel" and primary is not None:
        raise invalid("only a Sentinel address has a #primary")
    tls, wait = params(query, given)
    if not tls_on and any(v is not None for v in tls.values()):
        raise invalid("ca, cert and key need a TLS address (rediss://)")
    out = {"topology": topology}
    if topology == "sentinel":
        out["primary"] = primary
    out.update({"tls": tls if tls_on else None, "nodes": nodes, "user": user,
                "password": password, "db": db, "wait": wait})
    shown_nodes = ",".join("[%s]:%d" % (n["host"], n["port"]) if ":" in n["host"] else
                           "%s:%d" % (n["host"], n["port"]) for n in nodes)
    red = "%s://%s%s/%d" % (scheme, ("%s:***@" % (user or "")) if password is not None else "",
                            shown_nodes, db)
    if topology == "sentinel":
        red += "#" + primary
    out["redacted"] = red
    return out


NEEDS = [("tls", "TLS (rediss)"), ("cluster", "Redis Cluster"), ("sentinel", "Sentinel"),
         ("wait", "durable claims (wait_replicas)")]


def check(address, supports):
    needs = {"tls": address["tls"] is not None, "cluster": address["topology"] == "cluster",
             "sentinel": address["topology"] == "sentinel", "wait": address["wait"] is not None}
    for key, what in NEEDS:
        if needs[key] and key not in supports:
            raise Refused("store_address_unsupported", "the store address needs %s, which this "
                          "front end's Redis client does not do" % what)


ADDRESSES = [
    # one node
    "redis://127.0.0.1", "redis://127.0.0.1:6380", "redis://127.0.0.1:6380/2", "redis://localhost/",
    "redis://Redis.Example.internal:7000/15", "redis://[::1]", "redis://[::1]:7000/3",
    "redis://[2001:db8::10]:6379", "redis://:secret@127.0.0.1", "redis://bob:secret@127.0.0.1:6390/1",
    "redis://bob:p%40ss%3Aw%2Fd%23%3F@h", "redis://b%C3%B6b:%E2%82%AC@h", "redis://bob:a@b@h",
    "redis://h/0", "redis://h/1000000",
    # TLS
    "rediss://127.0.0.1:6380", "rediss://bob:pw@127.0.0.1:6380?ca=/etc/ca.pem",
    "rediss://h?ca=/etc/ca.pem&cert=/etc/c.pem&key=/etc/c.key", "rediss://h?cert=c.pem&key=c.key",
    "rediss://h?ca=%2Fpath%20with%20space%2Fca.pem",
    # cluster
    "redis-cluster://127.0.0.1:7000", "redis-cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002",
    "rediss-cluster://u:p@127.0.0.1:7000,[::1]:7001?ca=ca.pem", "redis-cluster://h/0",
    "redis-cluster://a,b,c",
    # sentinel
    "redis-sentinel://127.0.0.1:26379#mymaster", "redis-sentinel://a,b:26380,c#mymaster",
    "redis-sentinel://u:p@a,b/2#my%20primary", "rediss-sentinel://a?ca=ca.pem#p",
    # durable claims
    "redis://h?wait_replicas=1", "redis://h?wait_replicas=2&wait_timeout_ms=100",
    "redis-cluster://a,b?wait_replicas=1&wait_timeout_ms=60000", "rediss://h?ca=c&wait_replicas=64",
    # refused: the text
    "", "redis", "redis:/h", "http://h", "REDIS://h", "unix:///tmp/redis.sock", "redis+cluster://h",
    "redis://", "redis://:6379", "redis://h:0", "redis://h:65536", "redis://h:x", "redis://h:",
    "redis://h:-1", "redis://h:0006379", "redis://h/x", "redis://h/-1", "redis://h/1000001",
    "redis://h/1/2", "redis://a,b", "redis://h,", "redis-cluster://a,,b", "redis-cluster://h/1",
    "redis://h#p", "redis-sentinel://h", "redis-sentinel://h#", "redis://bob@h", "redis://bob:@h",
    "redis://:@h", "redis://:p%zz@h", "redis://:p%4@h", "redis://:%FF@h", "redis://%ZZ:p@h",
    "redis://[::1", "redis://[::1]x", "redis://[]", "redis://[abc]", "redis://[h.example]:1",
    "redis://h_x y", "redis://h\t", "redis://h%20", "redis://h\x7f", "redis://h?", "redis://h?x",
    "redis://h?ca=c.pem", "redis://h?cert=c&key=k", "rediss://h?cert=c.pem", "rediss://h?key=k",
    "rediss://h?ca=", "rediss://h?ca=a&ca=b", "redis://h?db=1", "redis://h?password=hunter2",
    "redis://h?a-very-long-parameter-name-pasted-by-mistake-here=1", "redis://h?hunter%32=1",
    "redis://h?wait_replicas=0", "redis://h?wait_replicas=65", "redis://h?wait_replicas=x",
    "redis://h?wait_timeout_ms=5", "redis://h?wait_replicas=1&wait_timeout_ms=0",
    "redis://h?wait_replicas=1&wait_timeout_ms=60001", "redis://h?wait_replicas=1&wait_replicas=2",
    "redis://h?wait_replicas=%31", "redis://h?wait_replicas=1%",
    # placeholders
    "${REDIS_URL}", "redis://:${REDIS_PASSWORD}@h", "redis://h:${PORT}", "redis://h?ca=${CA}",
    "redis://h/$1", "redis://h?ca=$%7BX%7D",
]

LIMITED = [  # (address, what the client supports)
    ("rediss://h", ["cluster", "sentinel", "wait"]),
    ("rediss://h", ["tls"]),
    ("redis-cluster://a,b", ["tls", "sentinel", "wait"]),
    ("redis-cluster://a,b", ["cluster"]),
    ("redis-sentinel://a#p", ["tls", "cluster", "wait"]),
    ("redis-sentinel://a#p", ["sentinel"]),
    ("redis://h?wait_replicas=1", ["tls", "cluster", "sentinel"]),
    ("redis://h?wait_replicas=1", ["wait"]),
    ("redis://h", []),
    ("rediss-cluster://a?wait_replicas=1", ["wait"]),
    ("rediss-cluster://a?wait_replicas=1", ["tls", "wait"]),
    ("rediss-cluster://a?wait_replicas=1", ["tls", "cluster"]),
    ("redis://h/x", []),
]


def expect(address, supports=None):
    try:
        out = parse(address)
        if supports is not None:
            check(out, supports)
        return {"address": out}
    except Refused as e:
        return {"error": e.code, "message": e.message}


def render():
    cases = []
    for a in ADDRESSES:
        cases.append({"name": repr(a), "address": a, "expect": expect(a)})
    for a, s in LIMITED:
        cases.append({"name": "%r on a client with %s" % (a, ", ".join(s) or "nothing"), "address": a,
                      "supports": s, "expect": expect(a, s)})
    for c in cases:
        assert "${" not in c["expect"].get("message", "").replace("`${...}`", ""), c
        if "address" in c["expect"] and len(c["expect"]["address"]["password"] or "") >= 4:
            assert c["expect"]["address"]["password"] not in c["expect"]["address"]["redacted"]
        if "error" in c["expect"] and "@" in c["address"]:
            assert c["address"] not in c["expect"]["message"], c
    return vectorfile.text(FORMAT, "The store address (CONTRACT §5.4): what the core reads from each "
                           "address, or its refusal; `supports` names what the front end's client "
                           "can do (absent: everything).", cases)


if __name__ == "__main__":
    sys.exit(vectorfile.main(sys.argv, "generate_store_address.py", HERE, lambda: {FILE: render()}))
