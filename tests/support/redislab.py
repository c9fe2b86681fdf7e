"""A private `redis-server` for one test: a free loopback port, its own directory, AOF on (every write fsynced, as
a team that must lose no acknowledged message would run it), started and stopped by the `redis_server` fixture; and
the ACL recipe of docs/stores.md for one team's user."""

from __future__ import annotations

import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.support.wait import wait_until

START_DEADLINE = 20.0
PORT_TRIES = 3


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
    password: str | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def answers(self) -> bool:
        """Whether this server answers on the port: its own process id in INFO, so that a server another test
        started on the same port (a free port is only free until someone binds it) is never taken for it."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1.0) as s:
                auth = f"AUTH {self.password}\r\n".encode() if self.password else b""
                s.sendall(auth + b"INFO server\r\n")
                reply = b""
                while (chunk := s.recv(65536)) and not _whole((reply := reply + chunk).removeprefix(b"+OK\r\n")):
                    pass
        except (OSError, ValueError):  # ValueError: not a bulk string length, so not a redis-server
            return False
        return f"\r\nprocess_id:{self.proc.pid}\r\n".encode() in reply

    def kill_and_restart(self) -> None:
        """SIGKILL the server (no shutdown save), then start it again on the same port and directory: what it
        serves afterwards is what its append-only file replayed."""
        self.proc.kill()
        self.proc.wait(timeout=10)
        self.proc = _spawn(self.port, self.workdir)
        if not _await(self):
            raise AssertionError(f"redis-server could not bind its port {self.port} again:\n{_log(self)}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def start(workdir: Path, *, password: str | None = None) -> RedisServer:
    """A server on a free port; another port if a process bound this one before the server could (tests run in
    parallel, each starting servers of its own). With `password`, one that refuses clients without it (set in its
    config file, so the password is in no process's argv)."""
    workdir.mkdir(parents=True, exist_ok=True)
    conf = workdir / "redis.conf"
    conf.write_text(f"requirepass {password}\n" if password else "")
    conf.chmod(0o600)
    for _ in range(PORT_TRIES):
        (workdir / "redis.log").unlink(missing_ok=True)  # the log tells why a try failed: this try's only
        port = free_port()
        server = RedisServer(port, workdir, _spawn(port, workdir), password)
        if _await(server):
            return server
    raise AssertionError(f"redis-server found no free port in {PORT_TRIES} tries:\n{_log(server)}")


def _whole(reply: bytes) -> bool:
    """Whether a bulk-string reply (`$<length>\\r\\n<bytes>\\r\\n`) or an error reply has arrived whole."""
    head, sep, body = reply.partition(b"\r\n")
    if not sep:
        return False
    if not head.startswith(b"$"):
        return True
    return len(body) >= int(head[1:]) + 2


def _spawn(port: int, workdir: Path) -> subprocess.Popen[bytes]:
    binary = shutil.which("redis-server")
    assert binary, "redis-server is not installed (apt-get install -y redis-server; .ci/run does)"
    argv = [
        binary, str(workdir / "redis.conf"), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir),
        "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--protected-mode", "yes", "--daemonize", "no",
        "--logfile", str(workdir / "redis.log"),
    ]  # fmt: skip
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _log(server: RedisServer) -> str:
    path = server.workdir / "redis.log"
    return path.read_text(errors="replace")[-2000:] if path.exists() else "(no log)"


def _await(server: RedisServer) -> bool:
    """Wait for the server to answer (the deadline fails the test, with the server's log); False when it exited
    because its port was taken, and a failure when it exited for any other reason."""
    try:
        wait_until(lambda: server.answers() or server.proc.poll() is not None, START_DEADLINE,
                   "redis-server to answer INFO", explain=lambda: _log(server))  # fmt: skip
    except AssertionError:
        server.stop()
        raise
    if server.proc.poll() is None:
        return True
    if "Address already in use" in _log(server):
        return False
    raise AssertionError(f"redis-server exited with {server.proc.returncode}:\n{_log(server)}")


def recipe(team: str, secret: str) -> list[str]:
    """docs/stores.md's `ACL SETUSER` line for one team, as words."""
    return ["ACL", "SETUSER", f"team-{team}", "on", f">{secret}", "resetkeys", f"~at:{{{team}}}:*", "%RW~at:teams",
            "resetchannels", "+@all", "-@dangerous"]  # fmt: skip
