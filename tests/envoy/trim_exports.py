#!/usr/bin/env python3
"""Removes the proxy-wasm callbacks the filter does not use from a module's
exports (standard library only; run by tests/envoy/build.sh before wasm-opt).

    trim_exports.py IN.wasm OUT.wasm

The proxy-wasm SDK exports every callback of the ABI. Envoy calls a
callback only when the module exports it, so each exported but unused one
(response headers and body, log, done, ...) costs a VM entry per request
for nothing. Every export whose name starts with `proxy_on_` and is not in
KEEP is dropped; wasm-opt then removes the code only they reached.
`--list` prints a module's exports instead.
"""

import sys

# The callbacks the filter implements, and those the SDK needs to run it.
KEEP = {
    "proxy_on_memory_allocate",
    "proxy_on_context_create",
    "proxy_on_vm_start",
    "proxy_on_configure",
    "proxy_on_tick",
    "proxy_on_request_headers",
    "proxy_on_request_body",
    "proxy_on_request_trailers",
    # Drops the SDK's per-request context (and the filter's state with it).
    "proxy_on_delete",
}
EXPORT_SECTION = 7


def leb(data, pos):
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, pos


def uleb(value):
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        out.append(b | (0x80 if value else 0))
        if not value:
            return bytes(out)


def exports(payload):
    """(name, raw entry bytes) for each export of an export section."""
    count, pos = leb(payload, 0)
    out = []
    for _ in range(count):
        start = pos
        n, pos = leb(payload, pos)
        name = payload[pos:pos + n].decode("utf-8")
        pos += n + 1  # kind
        _, pos = leb(payload, pos)  # index
        out.append((name, payload[start:pos]))
    if pos != len(payload):
        raise ValueError("export section: %d bytes left over" % (len(payload) - pos))
    return out


def sections(data):
    if data[:8] != b"\0asm\1\0\0\0":
        raise ValueError("not a WebAssembly 1 module")
    pos = 8
    while pos < len(data):
        sid = data[pos]
        size, body = leb(data, pos + 1)
        yield sid, data[body:body + size]
        pos = body + size


def trim(data):
    out, dropped = bytearray(data[:8]), []
    for sid, payload in sections(data):
        if sid == EXPORT_SECTION:
            kept = []
            for name, raw in exports(payload):
                if name.startswith("proxy_on_") and name not in KEEP:
                    dropped.append(name)
                else:
                    kept.append(raw)
            payload = uleb(len(kept)) + b"".join(kept)
        out += bytes([sid]) + uleb(len(payload)) + payload
    return bytes(out), dropped


def main(argv):
    if len(argv) == 2 and argv[0] == "--list":
        with open(argv[1], "rb") as f:
            data = f.read()
        for sid, payload in sections(data):
            if sid == EXPORT_SECTION:
                print("\n".join(name for name, _ in exports(payload)))
        return 0
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[0], "rb") as f:
        data, dropped = trim(f.read())
    missing = KEEP - {n for sid, p in sections(data) if sid == EXPORT_SECTION for n, _ in exports(p)}
    if missing:
        print("trim_exports: the module lacks %s" % ", ".join(sorted(missing)), file=sys.stderr)
        return 1
    with open(argv[1], "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
