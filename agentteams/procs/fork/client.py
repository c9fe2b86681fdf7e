"""The lead's handle on its fork server: start it at start-up, give teammates `env()`, `stop()` at exit."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from agentteams.procs import launcher as launch
from agentteams.procs.fork.server import STOP_WAIT
from agentteams.procs.socket_dir import ensure_private, private_dir

PRESTART_WAIT = 2.0  # the forked child's pid normally comes back within a few ms
LAUNCHER_NICE = 10


@dataclass
class Prestarted:
    """A teammate the fork server started before its pane: what the pane's launcher needs to attach to it."""

    pid: int
    env: dict[str, str] = field(default_factory=dict)  # for the pane: the child's own socket, and ours to fall back on
    # before the pane's launcher: `nice`, so its start (~10 ms of CPU) yields to the teammate's on a busy machine;
    # the launcher only relays from then on, and if the teammate is gone it starts one through the server (not niced)
    prefix: list[str] = field(default_factory=list)
    conn: socket.socket | None = None  # the child says on it when its first request is out (forkearly.request_out)

    def await_request(self, timeout: float) -> None:
        """Until the child's first model request is out (or it ended, or `timeout`): the pane is made after that, so
        its making (tmux, the launcher's start) and the lead's own next request take no CPU from the child's start."""
        conn, self.conn = self.conn, None
        if conn is None:
            return
        with contextlib.suppress(OSError), conn:
            poller = select.poll()  # not select(): a lead with many files open has descriptors past 1024
            poller.register(conn, select.POLLIN)
            poller.poll(timeout * 1000)

    def cancel(self) -> None:
        """Its pane could not be made: hang it up, as a closed pane would (its socket goes with it)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGHUP)
        with contextlib.suppress(OSError, KeyError):
            os.unlink(self.env[launch.ENV_VAR])


class ForkServer:
    """The lead's fork server process: start it at start-up, pass `env()` to teammates, `stop()` at exit."""

    def __init__(self, proc: subprocess.Popen[bytes], socket_path: Path) -> None:
        self.proc = proc
        self.socket_path = socket_path
        self.error: str | None = None  # the server's own words when it failed to start
        self._buf = b""
        self._ready = False
        self._stopped = False

    @classmethod
    def start(cls, env: dict[str, str] | None = None, directory: Path | None = None) -> ForkServer:
        """Launch the server with the lead's environment (or `env`); does not wait for it (see `wait_ready`)."""
        env = dict(os.environ if env is None else env)
        env.pop(launch.ENV_VAR, None)
        directory = ensure_private(directory) if directory is not None else private_dir(env)
        proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "agentteams.procs.fork.server", "--dir", str(directory)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            start_new_session=True,  # the terminal's Ctrl-C and hang-up are the lead's; EOF on stdin is ours
        )  # fmt: skip
        return cls(proc, directory / f"fs-{proc.pid}.sock")

    def wait_ready(self, timeout: float) -> bool:
        """True once the server listens; False when it is not ready within `timeout` or has failed (see `error`)."""
        if self._ready or self._stopped:
            return self._ready
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                return False
            chunk = os.read(fd, 256)
            if not chunk:
                self._failed()
                return False
            self._buf += chunk
        self._ready = self._buf.startswith(b"ready\n")
        if self._ready:
            self._close_pipes()
        return self._ready

    def env(self) -> dict[str, str]:
        """What to add to a teammate's command environment (empty once the server has exited)."""
        if self._stopped or self.proc.poll() is not None:
            return {}
        return {launch.ENV_VAR: str(self.socket_path)}

    def prestart(self, argv: list[str], env: dict[str, str], cwd: Path) -> Prestarted | None:
        """Start teammate `argv` now, before its pane exists, its output held until the pane's launcher attaches
        (procs/fork/early.py): the pane's start is then off the path to its first request. None: start it in its pane
        as before (no server yet, or it failed); a child that got no go-ahead from us exits, so none runs twice."""
        if not self.env():
            return None
        umask = os.umask(0o022)
        os.umask(umask)
        env = {**env, launch.ENV_VAR: str(self.socket_path)}  # the child's own socket goes beside ours
        request: dict[str, object] = {"argv": argv, "env": env, "cwd": str(cwd), "umask": umask, "attach": True}
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        null = os.open(os.devnull, os.O_RDWR)
        kept = False
        try:
            sock.settimeout(PRESTART_WAIT)
            sock.connect(str(self.socket_path))
            launch.send_request(sock, request, [null, null, null])  # its stdio until the pane's arrives
            frame = launch.read_frame(sock)
            if frame is None or frame[0] != b"P":
                return None
            sock.sendall(launch.GO)
            kept = True
        except OSError:
            return None
        finally:
            os.close(null)
            if not kept:
                sock.close()
        own = str(self.socket_path.with_name(f"fs-{frame[1]}.sock"))
        nice = shutil.which("nice")
        prefix = [nice, "-n", str(LAUNCHER_NICE)] if nice else []
        return Prestarted(frame[1], {launch.ENV_VAR: own, launch.FALLBACK_VAR: str(self.socket_path)}, prefix, sock)

    @staticmethod
    def launcher_argv() -> list[str]:
        """What a pane runs before the teammate's own command line to reach this server: the lean launcher, on
        this interpreter without `site` (the console script's start-up is three times as long)."""
        return [sys.executable, "-S", str(Path(__file__).parent.parent / "pane_launcher.py")]

    def stop(self) -> None:
        """Close its stdin (it exits, its socket removed), kill it if it lingers; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        with contextlib.suppress(OSError):
            self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(STOP_WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._close_pipes()
        with contextlib.suppress(OSError):
            if self.socket_path.is_socket():  # killed before it could clean up
                self.socket_path.unlink()

    def _failed(self) -> None:
        lines: list[str] = []
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            self.proc.wait(STOP_WAIT)
            lines = self.proc.stderr.read().decode(errors="replace").strip().splitlines()  # type: ignore[union-attr]
        self.error = lines[-1] if lines else f"fork server exited with status {self.proc.poll()}"

    def _close_pipes(self) -> None:
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()
