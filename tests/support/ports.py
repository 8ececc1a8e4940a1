"""Free ports of 127.0.0.1 for the tests that pick a port and start a
server on it afterwards: the one picker of the Python tests.

By default the kernel picks (bind to port 0). scripts/test runs its parts
in two lanes at once and gives each lane its own range in
TOOLCTX_TEST_PORTS ("LOW-HIGH", outside the kernel's ephemeral range,
/proc/sys/net/ipv4/ip_local_port_range): a port picked here then never
collides with one the other lane picks, nor with one the kernel hands out.
Each port is still checked by binding it (without SO_REUSEADDR, so a port
in TIME_WAIT counts as taken). A process walks its range from a random
point, so that two processes of one lane rarely try the same ports.

Standard library only.
"""

from __future__ import annotations

import os
import random
import socket

_cursor: list[int] = []


def _range() -> tuple[int, int] | None:
    spec = os.environ.get("TOOLCTX_TEST_PORTS", "").strip()
    if not spec:
        return None
    low, _, high = spec.partition("-")
    lo, hi = int(low), int(high)
    if not 1024 <= lo <= hi <= 65535:
        raise ValueError("TOOLCTX_TEST_PORTS must be LOW-HIGH within 1024-65535, got %r" % spec)
    return lo, hi


def free_ports(n: int) -> list[int]:
    """`n` distinct ports of 127.0.0.1 free right now."""
    bounds = _range()
    socks: list[socket.socket] = []
    ports: list[int] = []
    try:
        if bounds is None:
            for _ in range(n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", 0))
                ports.append(s.getsockname()[1])
            return ports
        lo, hi = bounds
        size = hi - lo + 1
        if not _cursor:
            _cursor.append(random.randrange(size))
        for _ in range(size):
            port = lo + _cursor[0] % size
            _cursor[0] += 1
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                s.close()
                continue
            socks.append(s)
            ports.append(port)
            if len(ports) == n:
                return ports
        raise OSError("no %d free ports in TOOLCTX_TEST_PORTS=%s" % (n, os.environ["TOOLCTX_TEST_PORTS"]))
    finally:
        for s in socks:
            s.close()


def free_port() -> int:
    """One port of 127.0.0.1 free right now."""
    return free_ports(1)[0]
