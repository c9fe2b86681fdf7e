"""HTTP plumbing for the mock API: read the request, hand it to `MockApp`, write JSON or chunked SSE back."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

from agentteams.mockapi import eventstream, sse
from agentteams.mockapi.app import MockApp, Reply, error_reply


class MockHTTPServer(ThreadingHTTPServer):
    """A threaded server that knows its `MockApp` and can close its open keep-alive connections."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], app: MockApp) -> None:
        self.app = app
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        super().__init__(address, Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conns_lock:
            self._conns.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._conns_lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that hung up is not an error
            super().handle_error(request, client_address)

    def close_connections(self) -> None:
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # each SSE event goes out at once: no 40 ms wait on a delayed ACK
    server_version = "agentteams-mockapi"

    def log_message(self, format: str, *args: Any) -> None:  # the app keeps its own log
        pass

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_OPTIONS(self) -> None:
        self._dispatch("OPTIONS")

    def parse_request(self) -> bool:
        self.arrived = time.time()  # its first line is in: the request has arrived (parsing it is the server's time)
        return super().parse_request()

    def _dispatch(self, method: str) -> None:
        app = cast(MockHTTPServer, self.server).app
        raw = self._read_body().decode("utf-8", "replace")
        try:
            reply = app.handle(method, self.path, dict(self.headers.items()), raw, arrived=self.arrived)
        except Exception as e:  # a bug in the mock: say so to the client and on stderr, keep serving
            traceback.print_exc()
            reply = error_reply(500, f"mock server error: {type(e).__name__}: {e}")
        try:
            if reply.events is not None:
                self._send_stream(reply)
            else:
                self._send_json(reply, head=method == "HEAD")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            return self._read_chunked()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _read_chunked(self) -> bytes:
        data = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return data
            data += self.rfile.read(size)
            self.rfile.readline()

    def _send_json(self, reply: Reply, *, head: bool) -> None:
        data = b"" if reply.body is None else json.dumps(reply.body, ensure_ascii=False).encode()
        self.send_response(reply.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if not head:
            self.wfile.write(data)
        self.wfile.flush()

    def _send_stream(self, reply: Reply) -> None:
        framed = reply.framing == "eventstream"
        encode = eventstream.encode if framed else sse.encode
        self.send_response(reply.status)
        self.send_header("content-type", eventstream.CONTENT_TYPE if framed else "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        for name, data in reply.events or []:
            if reply.delta_delay and name == "content_block_delta":
                time.sleep(reply.delta_delay)
            self._chunk(encode(name, data))
        self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()
