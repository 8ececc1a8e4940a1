#!/usr/bin/env python3
"""Seeds the fuzz corpora from the committed conformance vectors: request
bodies for `json`, `json_differential` and `check`, tokens for `token`."""
import base64, glob, json, os, struct, sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "..", "..")
corpus = {name: os.path.join(here, "corpus", name) for name in ("check", "token", "json", "json_differential")}
for d in corpus.values():
    os.makedirs(d, exist_ok=True)
n = 0
for path in sorted(glob.glob(os.path.join(root, "tests", "vectors", "*.json"))):
    doc = json.load(open(path, encoding="utf-8"))
    if "format" in doc:  # helpers, settings, memory store, store address: no requests
        continue
    for case in doc["cases"]:
        req = case.get("request", {})
        body = req["body"].encode() if "body" in req else base64.b64decode(req.get("body_b64", ""))
        token = next((v for k, v in req.get("headers", []) if k.lower() == "x-agentarea-context"), "").encode()
        n += 1
        for name, data in (("json", body), ("json_differential", body), ("token", token),
                           ("check", struct.pack("<H", len(token)) + token + body)):
            with open(os.path.join(corpus[name], "v%04d" % n), "wb") as f:
                f.write(data)
print("seeded %d cases into %s" % (n, ", ".join(sorted(corpus))))
