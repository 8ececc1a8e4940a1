#!/usr/bin/env python3
"""Independent check of the committed cancellation key vectors (stdlib only).

It shares no code with generate_cancel.py and derives every key a second
way: the id read by json.loads into Python values (a string stays a str,
a number becomes an int or a float), strings written by json.dumps,
numbers through decimal.Decimal to ECMAScript's Number.prototype.toString.
Exit status 1 on any disagreement.

    python3 tests/vectors/selfcheck_cancel.py [file]
"""

import decimal
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def es(x):
    """A finite double as ECMAScript prints it."""
    if x == 0:
        return "0"
    d = decimal.Decimal(repr(abs(x))).normalize()
    sign, digits, exp = d.as_tuple()
    s = "".join(map(str, digits))
    n = len(s) + exp  # x = 0.s * 10**n
    if len(s) <= n <= 21:
        out = s + "0" * (n - len(s))
    elif 0 < n <= 21:
        out = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * -n + s
    else:
        e = n - 1
        out = s[0] + ("." + s[1:] if len(s) > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return ("-" if x < 0 else "") + out


def expected(i):
    token = i.get("token")
    if not token:
        return None
    try:
        v = json.loads(i["id_json"])
    except ValueError:
        return None
    if isinstance(v, bool) or v is None or isinstance(v, (list, dict)):
        return None
    if isinstance(v, str):
        c = json.dumps(v, ensure_ascii=False)
    else:
        f = float(v)
        if math.isinf(f) or math.isnan(f):
            return None
        c = es(f)
    return c + "\n" + token


def main(argv):
    path = argv[1] if len(argv) > 1 else os.path.join(HERE, "cancel", "call_keys.json")
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    bad = 0
    for c in doc["cases"]:
        if c["kind"] != "cancel.call_key":
            print("%s: unknown kind %s" % (c["name"], c["kind"]))
            bad += 1
            continue
        want = expected(c["input"])
        if want != c["expect"]["key"]:
            print("%s: expected %r, the file says %r" % (c["name"], want, c["expect"]["key"]))
            bad += 1
    print("%d cases, %d disagree" % (len(doc["cases"]), bad))
    return 1 if bad or not doc["cases"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
