"""The stdlib wire to Anthropic's API against real local HTTP servers: streamed and compressed answers, kept-alive
connections (and one the server closed), redirects that never carry a credential to another origin, proxies."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import cast

import pytest

from agentteams.model import http_wire
from agentteams.model.config import ModelConfig
from agentteams.model.first_party import FirstParty, LibraryWire

Handler = Callable[[BaseHTTPRequestHandler], None]
SECRETS = {"x-api-key": "sk-ant-secret", "Authorization": "Bearer tok"}


@contextmanager
def serving(handle: Handler) -> Iterator[tuple[str, list[dict[str, object]]]]:
    """An HTTP/1.1 server calling `handle` for every request; its base URL and what it saw (line, headers, port)."""
    seen: list[dict[str, object]] = []

    class One(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _any(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            seen.append({"line": self.requestline, "headers": dict(self.headers), "port": self.client_address[1],
                         "body": body})  # fmt: skip
            handle(self)

        do_POST = do_GET = do_CONNECT = _any

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), One)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def answer(body: bytes, status: int = 200, **headers: str) -> Handler:
    def handle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        for name, value in {"content-length": str(len(body)), **headers}.items():
            h.send_header(name.replace("_", "-"), value)
        h.end_headers()
        h.wfile.write(body)

    return handle


def post(wire: http_wire.HttpWire, url: str, headers: dict[str, str] | None = None) -> http_wire.WireResponse:
    return wire.post(url, headers or {}, b"{}", 5.0)


def test_a_streamed_answer_is_read_line_by_line_whatever_its_line_ends() -> None:
    with serving(answer(b"event: a\r\ndata: 1\n\rdata: 2\r\n\r\n")) as (base, _seen):
        wire = http_wire.HttpWire(lambda: None)
        response = post(wire, base + "/v1/messages")
        assert list(response.iter_lines()) == ["event: a", "data: 1", "", "data: 2", ""]
        response.close()
        wire.close()


def test_a_chunked_answer_read_to_its_end_leaves_its_connection_for_the_next() -> None:
    def chunked(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("transfer-encoding", "chunked")
        h.end_headers()
        for piece in (b"data: one\n", b"\n", b""):
            h.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")

    with serving(chunked) as (base, seen):
        wire = http_wire.HttpWire(lambda: None)
        for _ in range(2):
            response = post(wire, base)
            assert list(response.iter_lines()) == ["data: one", ""]
            response.close()
        assert seen[0]["port"] == seen[1]["port"]
        wire.close()


def test_a_compressed_answer_is_inflated() -> None:
    with serving(answer(gzip.compress(b"data: zipped\n\n"), content_encoding="gzip")) as (base, seen):
        wire = http_wire.HttpWire(lambda: None)
        response = post(wire, base + "/v1/messages")
        assert list(response.iter_lines()) == ["data: zipped", ""]
        assert seen[0]["headers"]["Accept-Encoding"] == "gzip, deflate"  # type: ignore[index]
        wire.close()


def test_a_kept_alive_connection_is_reused_and_one_the_server_closed_replaced() -> None:
    def ok_then_hang_up(h: BaseHTTPRequestHandler) -> None:
        answer(b"ok")(h)
        h.close_connection = len(seen) == 2  # after the second answer, as a server's keep-alive timeout would

    with serving(ok_then_hang_up) as (base, seen):
        wire = http_wire.HttpWire(lambda: None)
        for _ in range(3):
            response = post(wire, base)
            assert response.read() == b"ok"
            response.close()
    assert seen[0]["port"] == seen[1]["port"], "one connection for the first two"
    assert seen[2]["port"] != seen[1]["port"] and len(seen) == 3, "the closed one replaced, the request sent once"


def test_a_redirect_to_another_origin_carries_no_credential() -> None:
    with (
        serving(answer(b"there")) as (other, seen_there),
        serving(answer(b"", 307, location=other + "/v1/messages")) as (base, seen_here),
    ):
        response = post(http_wire.HttpWire(lambda: None), base + "/v1/messages", {**SECRETS, "x-app": "a"})
        assert response.read() == b"there"
    here, there = (cast("dict[str, str]", seen[0]["headers"]) for seen in (seen_here, seen_there))
    assert "x-api-key" in here and "Authorization" in here
    assert "x-api-key" not in there and "Authorization" not in there and there["x-app"] == "a"
    assert seen_there[0]["line"] == "POST /v1/messages HTTP/1.1" and seen_there[0]["body"] == b"{}"


def test_a_see_other_is_followed_with_a_get_on_the_same_origin_keeping_the_credential() -> None:
    def handle(h: BaseHTTPRequestHandler) -> None:
        answer(b"", 303, location="/moved")(h) if h.path == "/v1/messages" else answer(b"moved")(h)

    with serving(handle) as (base, seen):
        assert post(http_wire.HttpWire(lambda: None), base + "/v1/messages", SECRETS).read() == b"moved"
    assert seen[1]["line"] == "GET /moved HTTP/1.1" and seen[1]["headers"]["x-api-key"] == "sk-ant-secret"  # type: ignore[index]


def test_a_plain_http_proxy_is_sent_the_whole_url_with_its_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    with serving(answer(b"via proxy")) as (proxy, seen):
        monkeypatch.setenv("HTTP_PROXY", proxy.replace("http://", "http://user:pa%40ss@"))
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        response = post(http_wire.HttpWire(lambda: None), "http://api.example.test/v1/messages")
        assert response.read() == b"via proxy"
    assert seen[0]["line"] == "POST http://api.example.test/v1/messages HTTP/1.1"
    headers = seen[0]["headers"]
    assert headers["Host"] == "api.example.test" and headers["Proxy-Authorization"] == "Basic dXNlcjpwYUBzcw=="  # type: ignore[index]


def test_an_https_request_tunnels_through_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    with serving(answer(b"", 403)) as (proxy, seen):
        monkeypatch.setenv("HTTPS_PROXY", proxy.replace("http://", "http://u:p@"))
        with pytest.raises(http_wire.WireError, match="403"):
            post(http_wire.HttpWire(lambda: None), "https://api.example.test/v1/messages")
    assert seen[0]["line"] == "CONNECT api.example.test:443 HTTP/1.0"
    assert seen[0]["headers"]["Proxy-Authorization"] == "Basic dTpw"  # type: ignore[index]


def test_no_proxy_goes_straight_there(monkeypatch: pytest.MonkeyPatch) -> None:
    with serving(answer(b"direct")) as (base, seen):
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert post(http_wire.HttpWire(lambda: None), base + "/v1/messages").read() == b"direct"
    assert seen[0]["line"] == "POST /v1/messages HTTP/1.1"


def test_a_tls_proxy_goes_through_the_sdk_s_http_library(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "https://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    wire = FirstParty(ModelConfig(api_key="k"))._new_wire("https://api.anthropic.com/v1/messages")
    assert isinstance(wire, LibraryWire)
    wire.close()


def test_nothing_listening_is_a_connection_error() -> None:
    with serving(answer(b"")) as (base, _seen):
        pass  # closed: nothing listens on its port any more
    with pytest.raises(http_wire.WireError) as caught:
        post(http_wire.HttpWire(lambda: None), base)
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)
