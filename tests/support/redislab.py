"""A private `redis-server` for one test: a free loopback port, its own directory, AOF on (every write fsynced, as
a team that must lose no acknowledged message would run it), started and stopped by the `redis_server` fixture."""

from __future__ import annotations

import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.support.wait import wait_until

START_DEADLINE = 20.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class RedisServer:
    """One running server; `url` is what AGENTTEAMS_STORE takes."""

    port: int
    workdir: Path
    proc: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def pings(self) -> bool:
        """The server answers (a password-protected one with NOAUTH: it is up all the same)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1.0) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith((b"+PONG", b"-NOAUTH"))
        except OSError:
            return False

    def kill_and_restart(self) -> None:
        """SIGKILL the server (no shutdown save), then start it again on the same port and directory: what it
        serves afterwards is what its append-only file replayed."""
        self.proc.kill()
        self.proc.wait(timeout=10)
        self.proc = _spawn(self.port, self.workdir)
        _await(self)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def start(workdir: Path, *, password: str | None = None) -> RedisServer:
    """A server in `workdir`; with `password`, one that refuses clients without it (set in its config file, so the
    password is in no process's argv)."""
    workdir.mkdir(parents=True, exist_ok=True)
    conf = workdir / "redis.conf"
    conf.write_text(f"requirepass {password}\n" if password else "")
    conf.chmod(0o600)
    port = free_port()
    server = RedisServer(port, workdir, _spawn(port, workdir))
    _await(server)
    return server


def _spawn(port: int, workdir: Path) -> subprocess.Popen[bytes]:
    binary = shutil.which("redis-server")
    assert binary, "redis-server is not installed (apt-get install -y redis-server; .ci/run does)"
    argv = [
        binary, str(workdir / "redis.conf"), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir),
        "--appendonly", "yes",
        "--appendfsync", "always", "--save", "", "--protected-mode", "yes", "--daemonize", "no",
        "--logfile", str(workdir / "redis.log"),
    ]  # fmt: skip
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _await(server: RedisServer) -> None:
    """Wait for PING to be answered (the deadline fails the test, with the server's log); a server that exited
    is stopped waiting for at once."""

    def log() -> str:
        path = server.workdir / "redis.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else "(no log)"

    try:
        wait_until(lambda: server.pings() or server.proc.poll() is not None, START_DEADLINE,
                   "redis-server to answer PING", explain=log)  # fmt: skip
    except AssertionError:
        server.stop()
        raise
    if server.proc.poll() is not None:
        raise AssertionError(f"redis-server exited with {server.proc.returncode}:\n{log()}")
