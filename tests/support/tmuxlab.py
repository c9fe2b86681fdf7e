"""The one tmux helper for tests: a server of our own on a private socket, its panes, and the tmux 3.3a
missed-SIGCHLD nudge. Tests get one through the `tmux` fixture (tests/conftest.py)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from tests.support.procs import end_processes, pid_alive, process_tree


class Pane(NamedTuple):
    """One pane as `list-panes` shows it."""

    dead: bool
    status: int | None  # the exit status of a dead pane's process, once tmux has reaped it
    pid: int | None
    title: str


class Tmux:
    """A tmux server of our own on socket `sock`; panes inherit the environment it was started with."""

    def __init__(self, sock: Path) -> None:
        if len(str(sock)) >= 100:
            raise ValueError(f"tmux socket path too long for a unix socket: {sock}")
        self.sock = sock

    def run(self, *args: str, env: Mapping[str, str] | None = None, check: bool = True) -> str:
        """One tmux command (UTF-8 assumed, `-u`); its stdout. AssertionError on failure unless `check` is off."""
        proc = subprocess.run(
            ["tmux", "-u", "-S", str(self.sock), *args], env=env, capture_output=True, text=True, timeout=15,
            check=False,
        )  # fmt: skip
        if check and proc.returncode != 0:
            raise AssertionError(f"tmux {shlex.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc.stdout.rstrip("\n")

    def start(
        self,
        env: Mapping[str, str] | None,
        cwd: Path,
        command: str | Sequence[str] = "cat",
        *,
        session: str = "lead",
        size: tuple[int, int] = (200, 50),
        options: Mapping[str, str] | None = None,
    ) -> str:
        """Start the server with `env` (None: ours) and global `options` (no other config) and a session whose pane
        runs `command` (a string: through the shell; a list: exec'd as it is); returns that pane's id."""
        config = "/dev/null"
        if options:
            conf = self.sock.with_name(self.sock.name + ".conf")
            conf.write_text("".join(f"set-option -g {k} {shlex.quote(v)}\n" for k, v in options.items()))
            config = str(conf)
        argv = [command] if isinstance(command, str) else list(command)
        return self.run(
            "-f", config, "new-session", "-d", "-s", session, "-x", str(size[0]), "-y", str(size[1]), "-c", str(cwd),
            "-P", "-F", "#{pane_id}", *argv, env=env,
        )  # fmt: skip

    def respawn(self, pane: str, command: str) -> None:
        self.run("respawn-pane", "-k", "-t", pane, command)

    def capture(self, pane: str, *, scrollback: bool = False) -> str:
        """What the pane shows (with `scrollback`: everything it has shown), wrapped lines joined."""
        return self.run("capture-pane", "-p", "-J", *(["-S", "-"] if scrollback else []), "-t", pane, check=False)

    def send(self, pane: str, *keys: str, literal: bool = False) -> None:
        """send-keys: key names (`Enter`, `C-c`), or with `literal` the text as it is."""
        self.run("send-keys", "-t", pane, *(["-l"] if literal else []), *keys)

    def panes(self) -> dict[str, Pane]:
        """Every pane on the server ({} once there is none).

        tmux 3.3a at times misses the SIGCHLD of a pane's process (tmux issue #311: its utempter SIGCHLD
        handler): the pane then stays alive over a zombie, or dead with no exit status. When a listing shows
        that, the server gets another SIGCHLD (as a late one would arrive anyway) and is asked again; callers
        poll, so a nudge that lands after the second look is seen by the next.
        """
        server, panes = self._list()
        if server is not None and any((p.dead and p.status is None) or _zombie(p) for p in panes.values()):
            os.kill(server, signal.SIGCHLD)
            _, panes = self._list()
        return panes

    def _list(self) -> tuple[int | None, dict[str, Pane]]:
        fmt = "#{pid}|#{pane_id}|#{pane_dead}|#{pane_dead_status}|#{pane_pid}|#{pane_title}"
        server, panes = None, {}
        for line in self.run("list-panes", "-a", "-F", fmt, check=False).splitlines():
            spid, pane, dead, status, pid, title = line.split("|", 5)
            server = int(spid)
            panes[pane] = Pane(dead == "1", int(status) if status else None, int(pid) if pid else None, title)
        return server, panes

    def exit_status(self, pane: str) -> int | None:
        """The exit status of the pane's process once it has ended and tmux has reaped it; None before."""
        state = self.panes().get(pane)
        return state.status if state is not None and state.dead else None

    def exited_ok(self, pane: str) -> bool:
        """True once the pane is gone, or dead with exit status 0."""
        state = self.panes().get(pane)
        return state is None or (state.dead and state.status == 0)

    def server_pid(self) -> int:
        return int(self.run("display-message", "-p", "#{pid}"))

    def kill_server(self) -> None:
        self.run("kill-server", check=False)

    def stop(self, timeout: float = 10.0) -> None:
        """Kill the server, then make sure every process its panes ran (and their descendants) is gone: they get
        `timeout` s to end on the hang-up, then SIGKILL."""
        pids = process_tree(p.pid for p in self.panes().values() if p.pid is not None)
        self.kill_server()
        end_processes(pids, timeout)


def _zombie(pane: Pane) -> bool:
    """A live pane over a process that has exited: tmux has not reaped it yet."""
    if pane.dead or pane.pid is None:
        return False
    return not pid_alive(pane.pid) and Path(f"/proc/{pane.pid}").exists()
