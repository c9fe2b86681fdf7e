"""The tmux spawn backend: a teammate per pane (placeholder `cat`, then `respawn-pane -k` the command).

The only module that imports libtmux; every tmux failure becomes a one-line `TmuxError`.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import libtmux
from libtmux import exc as tmux_exc

from agentteams.errors import AgentTeamsError

SWARM_SESSION = "agentteams-swarm"
MAX_PANES_PER_WINDOW = 5  # the lead + 4 teammates; further teammates go to another window
WINDOW_TAG = "@agentteams"  # window user option marking windows we created for teammates
PANE_TAG = "@agentteams-agent"  # pane user option: the agent id (name@team) a teammate pane runs
SECRET_KEYS = frozenset({"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"})
PLACEHOLDER = "cat"
_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class TmuxError(AgentTeamsError):
    """A tmux command that failed, or a tmux server that cannot be reached."""


def build_command_line(command: list[str] | str, cwd: Path, env: dict[str, str]) -> str:
    """`cd <cwd> && env K=V ... <argv>`, shell-quoted; a str command is run with `sh -c`."""
    if not command:
        raise ValueError("empty teammate command")
    secrets = sorted(SECRET_KEYS & env.keys())
    if secrets:
        raise ValueError(f"refusing to put {', '.join(secrets)} on a command line; pass it through the environment")
    bad = [k for k in env if not _ENV_KEY.match(k)]
    if bad:
        raise ValueError(f"invalid environment variable name {bad[0]!r}")
    argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
    parts = ["cd", shlex.quote(str(cwd)), "&&"]
    if env:
        parts += ["env", *(shlex.quote(f"{k}={v}") for k, v in env.items())]
    line = " ".join([*parts, shlex.join(argv)])
    if _CONTROL.search(line):
        raise ValueError("teammate command line contains control characters")
    return line


def _default_socket() -> str | None:
    """AGENTTEAMS_TMUX_SOCKET (how tests point commands at a private server), else the server in $TMUX."""
    override = os.environ.get("AGENTTEAMS_TMUX_SOCKET", "").strip()
    if override:
        return override
    tmux = os.environ.get("TMUX", "")
    return tmux.split(",", 1)[0] or None


class TmuxBackend:
    """Starts, inspects and stops teammate panes on one tmux server."""

    def __init__(self, socket_path: str | None = None) -> None:
        self.server = libtmux.Server(socket_path=socket_path or _default_socket())

    def _run(self, *args: str) -> list[str]:
        """Run one tmux command; its stdout lines, or a one-line TmuxError."""
        try:
            proc = self.server.cmd(*args)
        except tmux_exc.LibTmuxException as e:
            raise TmuxError(f"tmux {args[0]}: {type(e).__name__}: {e}".strip()) from None
        if proc.returncode != 0 or proc.stderr:
            detail = "; ".join(proc.stderr) or f"exit status {proc.returncode}"
            raise TmuxError(f"tmux {args[0]} failed: {detail}")
        return list(proc.stdout)

    def _query(self, target: str, fmt: str) -> str | None:
        """`display-message -p` for `target`, or None when the target does not exist."""
        try:
            out = self._run("display-message", "-p", "-t", target, fmt)
        except TmuxError:
            return None
        return out[0] if out else ""

    def spawn_pane(
        self, target_pane: str | None, name: str, color: str, command: list[str] | str, cwd: Path,
        env: dict[str, str], *, tag: str | None = None,
    ) -> str:  # fmt: skip
        """Start `command` in a new pane named `name`, bordered in `color`; return its pane id ("%N").

        `tag` (an agent id) is stored in the pane option @agentteams-agent, so cleanup can find our panes."""
        line = build_command_line(command, cwd, env)
        if _CONTROL.search(name + color + (tag or "")) or not name or not color:
            raise ValueError("pane name and colour must be non-empty text without control characters")
        pane = self._placeholder_pane(target_pane)
        batch = self._decoration(pane, name, color)
        if tag:
            batch.append(("set-option", "-p", "-t", pane, PANE_TAG, tag))
        batch.append(("respawn-pane", "-k", "-t", pane, "--", line))
        self._run_batch(batch)
        return pane

    def _run_batch(self, commands: list[tuple[str, ...]]) -> None:
        """Several tmux commands in one client call (`a ; b`): ~6 ms each saved on the spawn path."""
        args: list[str] = []
        for command in commands:
            args += [*command, ";"]
        self._run(*args[:-1])

    def _placeholder_pane(self, target_pane: str | None) -> str:
        """A new pane running `cat`: beside `target_pane`, or in the swarm session."""
        if target_pane is not None:
            found = (self._query(target_pane, "#{window_id} #{window_panes}") or "").split()
            if len(found) != 2:
                raise TmuxError(f"tmux pane {target_pane} does not exist")
            window, panes = found[0], int(found[1])
            if panes < MAX_PANES_PER_WINDOW:
                pane = self._split(target_pane, window)
                if pane is not None:
                    return pane
            session = self._query(target_pane, "#{session_id}") or ""
            return self._pane_in_teammate_window(session)
        if not self.server.has_session(SWARM_SESSION):
            return self._new_window("new-session", "-s", SWARM_SESSION)
        return self._pane_in_teammate_window(f"={SWARM_SESSION}")

    def _pane_in_teammate_window(self, session: str) -> str:
        """Split a teammate window of `session` that has room, or open a new one."""
        rows = self._run("list-windows", "-t", session, "-F", f"#{{window_id}} #{{window_panes}} #{{{WINDOW_TAG}}}")
        for row in reversed(rows):
            window, count, *tag = row.split()
            if tag != ["1"] or int(count) >= MAX_PANES_PER_WINDOW:
                continue
            try:  # the window can close under us when its teammates exit
                first = self._run("list-panes", "-t", window, "-F", "#{pane_id}")[0]
                pane = self._split(first, window, layout="tiled")
            except TmuxError:
                continue
            if pane is not None:
                return pane
        return self._new_window("new-window", "-t", f"{session}:")

    def _new_window(self, verb: str, *target: str) -> str:
        """A new tagged teammate window (or session) whose one pane runs the placeholder."""
        out = self._run(verb, "-d", *target, "-P", "-F", "#{pane_id} #{window_id}", PLACEHOLDER)
        pane, window = out[0].split()
        self._run("set-option", "-w", "-t", window, WINDOW_TAG, "1")
        return pane

    def _split(self, beside: str, window: str, layout: str = "main-vertical") -> str | None:
        """Split `beside` with the placeholder and re-layout; None when there is no room left."""
        try:
            out = self._run(
                "split-window", "-d", "-h", "-t", beside, "-P", "-F", "#{pane_id}", PLACEHOLDER, ";",
                "select-layout", "-t", window, layout,
            )  # fmt: skip
        except TmuxError as e:
            if "no space" in str(e):
                return None
            raise
        return out[0]

    def _pane_count(self, window: str) -> int:
        return len(self._run("list-panes", "-t", window, "-F", "#{pane_id}"))

    def _decoration(self, pane: str, name: str, color: str) -> list[tuple[str, ...]]:
        """Title, coloured borders, the title in the top border, and keep failed panes for inspection."""
        style = f"fg={color}"
        border = f"#[fg={color},bold] #{{pane_title}} #[default]"
        return [
            ("select-pane", "-t", pane, "-T", name),
            ("set-option", "-p", "-t", pane, "pane-border-style", style),
            ("set-option", "-p", "-t", pane, "pane-active-border-style", style),
            ("set-option", "-p", "-t", pane, "pane-border-format", border),
            ("set-option", "-w", "-t", pane, "pane-border-status", "top"),
            ("set-option", "-p", "-t", pane, "remain-on-exit", "failed"),
        ]

    def pane_alive(self, pane_id: str) -> bool:
        """True while the pane exists and its process has not exited."""
        return self._query(pane_id, "#{pane_id} #{pane_dead}") == f"{pane_id} 0"

    def pane_pid(self, pane_id: str) -> int | None:
        """The pid of the pane's process, or None when the pane is gone."""
        out = self._query(pane_id, "#{pane_id} #{pane_pid}")
        if not out or not out.startswith(f"{pane_id} "):
            return None
        pid = out.split()[1] if len(out.split()) > 1 else ""
        return int(pid) if pid.isdigit() else None

    def kill_pane(self, pane_id: str) -> None:
        """Kill the pane and its process; no error when it is already gone."""
        try:
            self._run("kill-pane", "-t", pane_id)
        except TmuxError:
            if self._query(pane_id, "#{pane_id}") == pane_id:
                raise

    def select_pane(self, pane_id: str, zoom: bool) -> None:
        """Bring the pane's window forward, focus the pane, and zoom it (or un-zoom its window)."""
        self._run("select-window", "-t", pane_id)
        self._run("select-pane", "-t", pane_id)
        zoomed = self._query(pane_id, "#{window_zoomed_flag}") == "1"
        if zoom != zoomed:
            self._run("resize-pane", "-Z", "-t", pane_id)
