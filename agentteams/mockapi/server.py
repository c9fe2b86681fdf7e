"""`MockServer`: the scripted Messages API served from a background thread, with its request log."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from agentteams.mockapi.app import MockApp, Record
from agentteams.mockapi.handler import MockHTTPServer
from agentteams.mockapi.script import load_script


class MockServer:
    """A scripted Messages API on `host:port` (0: any free port); start() serves it, stop() ends it."""

    def __init__(
        self,
        script: dict[str, Any] | str | Path,
        log_path: str | Path | None = None,
        port: int = 0,
        host: str = "127.0.0.1",
    ) -> None:
        self.script = load_script(script)
        self.app = MockApp(self.script, log_path)
        self.host = host
        self.port = port
        self._httpd: MockHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        """Bind and serve in a daemon thread; returns self. Raises OSError if the port is taken."""
        if self._httpd is not None:
            return self
        httpd = MockHTTPServer((self.host, self.port), self.app)
        self._httpd, self.port = httpd, int(httpd.server_address[1])
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=f"mockapi:{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close open connections and release the port (safe to call twice)."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("MockServer.base_url: start() the server first")
        return f"http://{self.host}:{self.port}"

    @property
    def requests(self) -> list[Record]:
        """A snapshot of every request so far: ts, method, path, route, turn, headers, body, status, response."""
        return self.app.records

    @property
    def arrivals(self) -> list[Record]:
        """Messages requests as soon as they are routed, including those whose answer is still delayed."""
        return self.app.arrivals

    @property
    def request_count(self) -> int:
        """How many requests are logged now (cheaper than `len(requests)`, which copies them)."""
        return self.app.count

    def wait_for_requests(
        self, n: int, timeout: float = 10.0, where: Callable[[Record], bool] | None = None, since: int = 0
    ) -> list[Record]:
        """At least `n` logged requests from the `since`th on (only those `where` accepts, if given); TimeoutError
        after `timeout` s."""
        return self.app.wait_for(n, timeout, where, since)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
