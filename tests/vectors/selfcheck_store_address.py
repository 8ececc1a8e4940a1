#!/usr/bin/env python3
"""Independent check of the committed store address vectors (stdlib only).

It shares no code with generate_store_address.py: every address is matched
against one regular expression per part of CONTRACT §5.4's grammar and
decoded with urllib.parse.unquote; an address that does not match, or
whose parts break a rule, must be refused in the file, and one that
matches must be read field by field as the file says. It also checks that
no refusal message quotes an address holding a password, that every
refusal code and topology is covered, and, for the `supports` cases, that
the first missing capability (TLS, Cluster, Sentinel, WAIT, in that order)
is the one named. Exit status 1 on any disagreement.

    python3 tests/vectors/selfcheck_store_address.py [file]
"""

import json
import os
import re
import sys
from urllib.parse import unquote

HERE = os.path.dirname(os.path.abspath(__file__))

ADDRESS = re.compile(
    r"(?P<scheme>rediss?(?:-cluster|-sentinel)?)://"
    r"(?:(?P<user>[^:@/?#]*):(?P<password>[^/?#]+)@)?"
    r"(?P<nodes>[^/?#@]+)"
    r"(?:/(?P<db>[0-9]{0,12}))?"
    r"(?:\?(?P<query>[^#]+))?"
    r"(?:#(?P<primary>.+))?")
NODE = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)\]|(?P<name>[A-Za-z0-9._-]+))(?::(?P<port>[0-9]{1,12}))?")
ESCAPES = re.compile(r"(?:[^%]|%[0-9A-Fa-f]{2})*")
PARAMS = {"ca", "cert", "key", "wait_replicas", "wait_timeout_ms"}


def text(s):
    """The percent-decoded text, or None when an escape is bad or not UTF-8."""
    if not ESCAPES.fullmatch(s):
        return None
    try:
        return unquote(s, errors="strict")
    except UnicodeDecodeError:
        return None


def read(address):
    """The address as this check reads it, or None: refused."""
    if re.search(r"\$\{.*\}", address) or re.search(r"[\x00-\x20\x7f]", address):
        return None
    m = ADDRESS.fullmatch(address)
    if not m or (m["user"] is not None and "@" in m["nodes"]):
        return None
    scheme = m["scheme"]
    topology = "cluster" if scheme.endswith("cluster") else "sentinel" if scheme.endswith("sentinel") else "single"
    nodes = []
    for part in m["nodes"].split(","):
        n = NODE.fullmatch(part)
        if not n:
            return None
        port = int(n["port"]) if n["port"] else (26379 if topology == "sentinel" else 6379)
        if not 1 <= port <= 65535:
            return None
        nodes.append({"host": (n["v6"] or n["name"]).lower(), "port": port})
    if topology == "single" and len(nodes) != 1:
        return None
    db = int(m["db"]) if m["db"] else 0
    if db > 1_000_000 or (topology == "cluster" and db):
        return None
    user = password = None
    if m["password"] is not None:
        user, password = text(m["user"]), text(m["password"])
        if user is None or not password:
            return None
        user = user or None
    primary = text(m["primary"]) if m["primary"] is not None else None
    if (topology == "sentinel") != bool(primary):
        return None
    got = {}
    if m["query"] is not None:
        for pair in m["query"].split("&"):
            name, eq, value = pair.partition("=")
            value = text(value)
            if not eq or name not in PARAMS or name in got or not value:
                return None
            got[name] = value
    tls_on = scheme.startswith("rediss")
    if ("cert" in got) != ("key" in got) or (not tls_on and {"ca", "cert", "key"} & set(got)):
        return None
    wait = None
    if "wait_timeout_ms" in got and "wait_replicas" not in got:
        return None
    if "wait_replicas" in got:
        r, t = got["wait_replicas"], got.get("wait_timeout_ms", "250")
        if not (r.isdigit() and t.isdigit() and 1 <= int(r) <= 64 and 1 <= int(t) <= 60000):
            return None
        wait = {"replicas": int(r), "timeout_ms": int(t)}
    out = {"topology": topology}
    if primary:
        out["primary"] = primary
    out["tls"] = {k: got.get(k) for k in ("ca", "cert", "key")} if tls_on else None
    out.update({"nodes": nodes, "user": user, "password": password, "db": db, "wait": wait})
    hosts = ",".join(("[%s]" if ":" in n["host"] else "%s") % n["host"] + ":%d" % n["port"] for n in nodes)
    auth = "%s:***@" % (user or "") if password else ""
    out["redacted"] = "%s://%s%s/%d%s" % (scheme, auth, hosts, db, "#" + primary if primary else "")
    return out


NEEDS = [("tls", lambda a: a["tls"] is not None, "TLS (rediss)"),
         ("cluster", lambda a: a["topology"] == "cluster", "Redis Cluster"),
         ("sentinel", lambda a: a["topology"] == "sentinel", "Sentinel"),
         ("wait", lambda a: a["wait"] is not None, "durable claims (wait_replicas)")]


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "store-address.json")
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    bad, codes, topologies = 0, set(), set()

    def fail(case, why):
        nonlocal bad
        bad += 1
        print("%s: %s" % (case["name"], why))

    for case in doc["cases"]:
        a, e = case["address"], case["expect"]
        mine = read(a)
        if "error" in e:
            codes.add(e["error"])
            if "@" in a and a in e["message"]:
                fail(case, "the message quotes the address")
        if "supports" in case and mine is not None:
            missing = [what for key, needs, what in NEEDS if needs(mine) and key not in case["supports"]]
            if missing:
                if e.get("error") != "store_address_unsupported" or missing[0] not in e.get("message", ""):
                    fail(case, "expected store_address_unsupported naming %s" % missing[0])
                continue
        if mine is None:
            if "error" not in e:
                fail(case, "accepted in the file, refused here")
            elif "${" in a and e["error"] != "config_placeholder":
                fail(case, "a placeholder refused as %s" % e["error"])
        elif e.get("address") != mine:
            fail(case, "the file reads %s, this check %s" % (json.dumps(e.get("address") or e), json.dumps(mine)))
        else:
            topologies.add(mine["topology"])
    for need in ("store_address_invalid", "store_address_unsupported", "config_placeholder"):
        if need not in codes:
            fail({"name": "coverage"}, "no %s case" % need)
    for need in ("single", "cluster", "sentinel"):
        if need not in topologies:
            fail({"name": "coverage"}, "no accepted %s address" % need)
    print("%s: %d cases, %d disagreements" % (os.path.basename(path), len(doc["cases"]), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
