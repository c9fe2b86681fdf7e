"""A local HTTPS server for the web tools' tests, with a self-signed certificate for 127.0.0.1 and localhost (made
with `cryptography`; clients trust it through SSL_CERT_FILE or NODE_EXTRA_CA_CERTS). Pages: an HTML page, a
redirect to another host and one on the same host, an 11 MB body with and without Content-Length, a page that
never answers, a 404."""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

HTML = (b"<html><head><title>Tea</title><style>p{}</style></head><body><h1>Hello</h1><p>Some <b>bold</b> text and "
        b"a <a href='/x'>link</a>.</p><script>var hidden = 1;</script></body></html>")  # fmt: skip
BIG = 11 * 1024 * 1024


def make_cert(where: Path) -> tuple[Path, Path]:
    """A self-signed CA certificate (for 127.0.0.1 and localhost) and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    cert_file, key_file = where / "cert.pem", where / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))  # fmt: skip
    return cert_file, key_file


@dataclass
class WebSite:
    base: str  # https://127.0.0.1:PORT
    port: int
    cert: Path
    paths: list[str] = field(default_factory=list)  # every path requested, in order
    release: threading.Event = field(default_factory=threading.Event)  # lets /slow go when the site stops


class _Handler(http.server.BaseHTTPRequestHandler):
    site: WebSite

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, kind: str = "text/plain", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.site.paths.append(self.path)
        port = self.site.port
        if self.path == "/page":
            self._send(200, HTML, "text/html; charset=utf-8")
        elif self.path == "/elsewhere":
            self._send(302, b"", headers={"location": f"https://localhost:{port}/page"})
        elif self.path == "/same":
            self._send(301, b"", headers={"location": "/page"})
        elif self.path in ("/big", "/big-chunked"):
            self._big(declared=self.path == "/big")
        elif self.path == "/slow":
            self.site.release.wait(120)
        else:
            self._send(404, b"not here")

    def _big(self, *, declared: bool) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        if declared:
            self.send_header("content-length", str(BIG))
        self.end_headers()
        chunk = b"a" * 65536
        try:
            for _ in range(BIG // len(chunk)):
                self.wfile.write(chunk)
        except OSError:
            pass  # the client stopped reading: that is the point


@contextmanager
def serve(where: Path) -> Iterator[WebSite]:
    cert, key = make_cert(where)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    port = server.server_address[1]
    site = WebSite(f"https://127.0.0.1:{port}", port, cert)
    server.RequestHandlerClass = type("Handler", (_Handler,), {"site": site})
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="websrv", daemon=True)
    thread.start()
    try:
        yield site
    finally:
        site.release.set()
        server.shutdown()
        server.server_close()
