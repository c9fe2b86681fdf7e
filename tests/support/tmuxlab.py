"""A private tmux server for tests (its own socket, no config file) and the checks team tests make on it."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path


class Tmux:
    """A tmux server of our own on socket `sock`; panes inherit the environment it was started with."""

    def __init__(self, sock: Path) -> None:
        if len(str(sock)) >= 100:
            raise ValueError(f"tmux socket path too long for a unix socket: {sock}")
        self.sock = sock

    def run(self, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
        proc = subprocess.run(
            ["tmux", "-S", str(self.sock), *args], env=env, capture_output=True, text=True, timeout=15, check=False
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"tmux {shlex.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc.stdout.rstrip("\n")

    def start(self, env: dict[str, str], cwd: Path, command: str = "cat", *, session: str = "lead") -> str:
        """Start the server and a session whose pane runs `command`; panes stay visible after they exit."""
        pane = self.run(
            "-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "220", "-y", "60", "-c", str(cwd),
            "-P", "-F", "#{pane_id}", command, env=env,
        )  # fmt: skip
        self.run("set-option", "-g", "remain-on-exit", "on")
        return pane

    def respawn(self, pane: str, command: str) -> None:
        self.run("respawn-pane", "-k", "-t", pane, command)

    def capture(self, pane: str) -> str:
        return self.run("capture-pane", "-p", "-J", "-t", pane, check=False)

    def send(self, pane: str, *keys: str, literal: bool = False) -> None:
        self.run("send-keys", "-t", pane, *(["-l"] if literal else []), *keys)

    def panes(self) -> dict[str, tuple[bool, str]]:
        """Every pane on the server: id -> (dead, title)."""
        out = self.run("list-panes", "-a", "-F", "#{pane_id}|#{pane_dead}|#{pane_title}", check=False)
        rows = (line.split("|", 2) for line in out.splitlines() if line)
        return {pane: (dead == "1", title) for pane, dead, title in rows}

    def exit_status(self, pane: str, timeout: float = 5.0) -> str:
        """The exit status of a pane's process once tmux has reaped it. tmux 3.3a sometimes misses the SIGCHLD
        (tmux issue #311) and shows a dead pane with no status: each try sends the server another one."""
        import signal
        import time

        server, deadline = self.server_pid(), time.monotonic() + timeout
        while True:
            os.kill(server, signal.SIGCHLD)
            dead, _, status = self.run(
                "display-message", "-p", "-t", pane, "#{pane_dead} #{pane_dead_status}"
            ).partition(" ")
            if dead == "1" and status:
                return status
            if time.monotonic() > deadline:
                raise AssertionError(f"pane {pane} has no exit status after {timeout:.0f} s")
            time.sleep(0.02)

    def server_pid(self) -> int:
        return int(self.run("display-message", "-p", "#{pid}"))

    def kill_server(self) -> None:
        self.run("kill-server", check=False)


def processes_with_env(name: str, value: str, *, exclude: frozenset[int] = frozenset()) -> list[int]:
    """Live processes whose environment has `name=value` (how a test finds what it started, and leftovers)."""
    wanted = f"{name}={value}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in exclude or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and wanted in environ.split(b"\0"):
            found.append(int(entry))
    return found
