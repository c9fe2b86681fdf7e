"""Anthropic's API over the standard library's `http.client`, as the SDK's httpx client sends it (the same first
headers, kept-alive connections, the environment's HTTP proxies, redirects followed), without httpx's ~110 ms of
imports on every cold start. `Unsupported` says when only httpx can do it (a SOCKS proxy, say): model/first_party.py."""

from __future__ import annotations

import base64
import functools
import http.client
import io
import math
import os
import threading
import time
import urllib.parse
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

MAX_REDIRECTS = 20  # httpx's own limit
FIRST_HEADERS = (("Accept-Encoding", "gzip, deflate"), ("Connection", "keep-alive"))  # httpx's, after Host
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "proxy-authorization"})  # dropped on a cross-origin redirect
CHUNK = 64 * 1024


class Unsupported(Exception):
    """What this client does not do and httpx does (a proxy that is not plain HTTP)."""


class WireError(OSError):
    """The request could not be sent or its answer read (the cause is chained): a connection error, retried."""


@dataclass(frozen=True)
class Origin:
    scheme: str
    host: str
    port: int

    @classmethod
    def of(cls, url: str) -> Origin:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise WireError(f"not an http(s) URL: {url}")
        return cls(parts.scheme, parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


class WireResponse:
    """A response whose body is read as it arrives: `iter_lines` for a stream, `read`/`text` for an error's body."""

    def __init__(self, raw: http.client.HTTPResponse, done: Callable[[bool], None], deadline: float = math.inf) -> None:
        self._raw, self._done = raw, done
        self._deadline = deadline  # monotonic: the whole answer is in by then (a trickle is no live answer)
        self.status_code = raw.status
        self.headers = raw.headers  # case-insensitive `get`, as httpx's
        encoding = (raw.headers.get("content-encoding") or "").strip().lower()
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS) \
            if encoding in ("gzip", "deflate") else None  # fmt: skip
        self._content: bytes | None = None
        self._closed = False

    def _chunks(self) -> Iterator[bytes]:
        try:
            while chunk := self._raw.read1(CHUNK):
                if time.monotonic() > self._deadline:  # each read came in time, the answer as a whole did not
                    raise WireError("the answer did not end within the request's timeout (API_TIMEOUT_MS)")
                yield self._inflate.decompress(chunk) if self._inflate else chunk
            if self._inflate:
                yield self._inflate.flush()
        except (OSError, http.client.HTTPException, zlib.error) as e:
            raise WireError(f"the answer broke off: {e}") from e

    def iter_lines(self) -> Iterator[str]:
        """Text lines as httpx splits them (on \\n, \\r\\n or \\r), each as soon as it is whole."""
        pending = b""
        for chunk in self._chunks():
            pending += chunk
            *lines, pending = pending.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
            for line in lines:
                yield line.decode("utf-8", "replace")
        if pending:
            yield pending.decode("utf-8", "replace")

    def read(self) -> bytes:
        if self._content is None:
            self._content = b"".join(self._chunks())
        return self._content

    @property
    def text(self) -> str:
        return self.read().decode("utf-8", "replace")

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            whole = self._raw.isclosed() or self._raw.length == 0  # read to its end (read1 leaves it open at 0)
            self._raw.close()
            self._done(whole and not self._raw.will_close)  # whole and kept alive: its connection goes back to the pool


class HttpWire:
    """POSTs over kept-alive connections, pooled per origin and proxy; safe to share between threads."""

    def __init__(self, tls: Callable[[], Any]) -> None:
        self._tls = tls  # the TLS context, asked for only when an https connection is made
        self._lock = threading.Lock()
        self._idle: dict[tuple[Origin, Origin | None], list[http.client.HTTPConnection]] = {}

    def post(self, url: str, headers: dict[str, str], body: bytes, timeout: float) -> WireResponse:
        method = "POST"
        for _ in range(MAX_REDIRECTS + 1):
            response = self._send(method, url, headers, body if method == "POST" else b"", timeout)
            location = response.headers.get("location")
            if response.status_code not in (301, 302, 303, 307, 308) or not location:
                return response
            response.read()
            response.close()
            target = urllib.parse.urljoin(url, location)
            if Origin.of(target) != Origin.of(url):  # never hand a credential to another origin
                headers = {k: v for k, v in headers.items() if k.lower() not in SECRET_HEADERS}
            if response.status_code in (301, 302, 303):  # as browsers and httpx: the body is dropped, GET follows
                method = "GET"
                headers = {k: v for k, v in headers.items() if k.lower() not in ("content-type", "content-length")}
            url = target
        raise WireError(f"more than {MAX_REDIRECTS} redirects")

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()

    def _send(self, method: str, url: str, headers: dict[str, str], body: bytes, timeout: float) -> WireResponse:
        origin = Origin.of(url)
        proxy = _proxy_for(origin)
        key = (origin, proxy)
        parts = urllib.parse.urlsplit(url)
        target = parts.path or "/"
        target += f"?{parts.query}" if parts.query else ""
        extra: dict[str, str] = {}
        if proxy is not None and origin.scheme == "http":  # a plain proxy is sent the whole URL
            target = f"http://{origin.host_header}{target}"
            extra = _proxy_auth(origin)
        started = time.monotonic()
        for attempt in (1, 2):
            connection, reused = self._connection(key, timeout)
            try:
                connection.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
                for name, value in (("Host", origin.host_header), *FIRST_HEADERS, *headers.items(), *extra.items()):
                    connection.putheader(name, value)
                if body or method == "POST":
                    connection.putheader("Content-Length", str(len(body)))
                connection.endheaders(body or None)
                raw = connection.getresponse()
            except (OSError, http.client.HTTPException) as e:
                connection.close()
                if reused and attempt == 1 and _stale(e):  # a kept-alive connection the server had closed
                    continue
                raise WireError(str(e) or type(e).__name__) from e
            return WireResponse(raw, functools.partial(self._release, key, connection), started + timeout)
        raise AssertionError("unreachable")

    def _connection(self, key: tuple[Origin, Origin | None], timeout: float) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            pool = self._idle.get(key)
            connection = pool.pop() if pool else None
        if connection is not None:
            connection.timeout = timeout
            if connection.sock is not None:
                connection.sock.settimeout(timeout)
            return connection, True
        origin, proxy = key
        where = proxy or origin
        if origin.scheme == "https":
            connection = http.client.HTTPSConnection(where.host, where.port, timeout=timeout, context=self._tls())
        else:
            connection = http.client.HTTPConnection(where.host, where.port, timeout=timeout)
        if proxy is not None and origin.scheme == "https":
            connection.set_tunnel(origin.host, origin.port, headers=_proxy_auth(origin))
        return connection, False

    def _release(self, key: tuple[Origin, Origin | None], connection: http.client.HTTPConnection, keep: bool) -> None:
        if not keep:
            connection.close()
            return
        with self._lock:
            self._idle.setdefault(key, []).append(connection)


def _stale(error: BaseException) -> bool:
    return isinstance(error, (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError))


def _proxy_url(origin: Origin) -> str | None:
    """The proxy the environment names for `origin` (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY; NO_PROXY), as httpx reads
    them."""
    if not any(name.lower().endswith("_proxy") for name in os.environ):  # what urllib reads: none, no import (~5 ms)
        return None
    import urllib.request

    proxies = urllib.request.getproxies_environment()
    if not proxies or urllib.request.proxy_bypass(origin.host):
        return None
    return proxies.get(origin.scheme) or proxies.get("all")


def _proxy_for(origin: Origin) -> Origin | None:
    url = _proxy_url(origin)
    if not url:
        return None
    if "://" not in url:
        url = f"http://{url}"
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise Unsupported(f"a {parts.scheme} proxy")
    return Origin("http", parts.hostname, parts.port or 80)


def _proxy_auth(origin: Origin) -> dict[str, str]:
    """Basic credentials for a proxy named with them (`http://user:pass@host:port`)."""
    url = _proxy_url(origin) or ""
    parts = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
    if parts.username is None:
        return {}
    user, password = urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or "")
    return {"Proxy-Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def check_supported(url: str) -> None:
    """Raise `Unsupported` when `url` must go through httpx instead (its proxy is not plain HTTP)."""
    _proxy_for(Origin.of(url))


def canned(status: int, headers: dict[str, str], body: bytes) -> WireResponse:
    """A response read from bytes by http.client itself, no socket: the fork server's rehearsal, tests."""
    head = "".join(f"{name}: {value}\r\n" for name, value in {**headers, "content-length": str(len(body))}.items())
    raw = http.client.HTTPResponse(_Bytes(f"HTTP/1.1 {status} Canned\r\n{head}\r\n".encode() + body))  # type: ignore[arg-type]
    raw.begin()
    return WireResponse(raw, lambda _keep: None)


class _Bytes:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def makefile(self, _mode: str) -> io.BytesIO:
        return io.BytesIO(self._data)
