"""A small HTTP/2 (h2c, prior knowledge) client for the Envoy tests, on
Python's `h2` (from PyPI into .tools/venv: scripts/test-envoy installs it).

It sends exactly the frames a test asks for: the body in DATA frames of a
chosen size, trailers, or a reset in the middle of a request. Everything
listens on 127.0.0.1.
"""

import socket

import h2.config
import h2.connection
import h2.events
import h2.settings


class Response:
    def __init__(self):
        self.status = None
        self.headers = []
        self.body = b""
        self.reset = None  # the error code when the stream was reset
        self.ended = False


class Connection:
    """One h2c connection; streams are sent and read one call at a time."""

    def __init__(self, port, timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        # Header names and values go out as given (bytes); the tests decide
        # what is well formed.
        config = h2.config.H2Configuration(client_side=True, header_encoding=None,
                                           validate_outbound_headers=False,
                                           normalize_outbound_headers=False)
        self.conn = h2.connection.H2Connection(config=config)
        self.conn.local_settings = h2.settings.Settings(
            client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 24})
        self.conn.initiate_connection()
        self.conn.increment_flow_control_window(1 << 24)
        self.port = port
        self.responses = {}
        self.flush()

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def close(self):
        try:
            self.conn.close_connection()
            self.flush()
        except Exception:
            pass
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _pump(self):
        """Reads once from the socket and files the events; False at EOF."""
        data = self.sock.recv(65536)
        if not data:
            return False
        for ev in self.conn.receive_data(data):
            r = self.responses.get(getattr(ev, "stream_id", None))
            if isinstance(ev, h2.events.ResponseReceived) and r is not None:
                hs = [(bytes(k).decode(), bytes(v).decode("utf-8", "replace")) for k, v in ev.headers]
                r.status = int(dict(hs)[":status"])
                r.headers = [(k, v) for k, v in hs if not k.startswith(":")]
            elif isinstance(ev, h2.events.DataReceived):
                if r is not None:
                    r.body += ev.data
                self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded) and r is not None:
                r.ended = True
            elif isinstance(ev, h2.events.StreamReset) and r is not None:
                r.reset = ev.error_code
                r.ended = True
        self.flush()
        return True

    def start(self, method, path, headers, end_stream=False):
        """Sends HEADERS for a new stream; returns its id."""
        sid = self.conn.get_next_available_stream_id()
        self.responses[sid] = Response()
        pseudo = [(b":method", method.encode()), (b":path", path.encode()), (b":scheme", b"http"),
                  (b":authority", b"127.0.0.1:%d" % self.port)]
        hs = pseudo + [(n.encode() if isinstance(n, str) else n, v.encode() if isinstance(v, str) else v)
                       for n, v in headers]
        self.conn.send_headers(sid, hs, end_stream=end_stream)
        self.flush()
        return sid

    def send_data(self, sid, body, frame=16384, end_stream=False):
        """Sends `body` in DATA frames of at most `frame` bytes, within flow
        control; stops early if the stream has been answered or reset."""
        r = self.responses[sid]
        pos = 0
        while pos < len(body) and not r.ended:
            window = min(self.conn.local_flow_control_window(sid), self.conn.max_outbound_frame_size, frame)
            if window <= 0:
                if not self._pump():
                    break
                continue
            chunk = body[pos:pos + window]
            pos += len(chunk)
            self.conn.send_data(sid, chunk, end_stream=end_stream and pos == len(body))
            self.flush()
        if end_stream and not body and not r.ended:
            self.conn.end_stream(sid)
            self.flush()
        return pos == len(body)

    def send_trailers(self, sid, trailers):
        self.conn.send_headers(sid, [(n.encode(), v.encode()) for n, v in trailers], end_stream=True)
        self.flush()

    def reset(self, sid, code=8):  # CANCEL
        self.conn.reset_stream(sid, error_code=code)
        self.flush()

    def wait(self, sid):
        """Reads until stream `sid` has ended (answered or reset)."""
        r = self.responses[sid]
        while not r.ended:
            if not self._pump():
                break
        return r

    def request(self, method, path, headers, body=b"", frame=16384, trailers=None):
        sid = self.start(method, path, headers, end_stream=not body and not trailers)
        if body or trailers:
            self.send_data(sid, body, frame=frame, end_stream=not trailers)
            if trailers and not self.responses[sid].ended:
                self.send_trailers(sid, trailers)
        return self.wait(sid)


def request(port, method, path, headers, body=b"", **kw):
    """One request on its own connection: (status, headers, body); status is
    None when the stream was reset without an answer."""
    with Connection(port) as c:
        r = c.request(method, path, headers, body, **kw)
        return r.status, r.headers, r.body
