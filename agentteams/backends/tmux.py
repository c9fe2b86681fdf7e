"""tmux: where this process runs in it, the panes of a server, and teammate panes (placeholder, then the command).

The only module that imports libtmux or reads $TMUX / $TMUX_PANE; every tmux failure becomes a one-line `TmuxError`.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentteams.errors import AgentTeamsError
from agentteams.model.providers import CREDENTIAL_ENV
from agentteams.store.redis.connection import STORE_SECRET_VARS

if TYPE_CHECKING:
    import libtmux

SWARM_SESSION = "agentteams-swarm"
MAX_PANES_PER_WINDOW = 5  # the lead + 4 teammates; further teammates go to another window
WINDOW_TAG = "@agentteams"  # window user option marking windows we created for teammates
PANE_TAG = "@agentteams-agent"  # pane user option: the agent id (name@team) a teammate pane runs
SOCKET_ENV = "AGENTTEAMS_TMUX_SOCKET"  # a server to use instead of the one we run in (how tests isolate tmux)
SECRET_KEYS = frozenset({"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", *CREDENTIAL_ENV, *STORE_SECRET_VARS})
PLACEHOLDER = "cat"
FULL_MARK = "agentteams-window-full"  # what a split-if-room call prints instead of a pane id
_PANE_ID = re.compile(r"%[0-9]+\Z")
_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SEP = "\x1f"  # between a pane's fields: tmux strips control characters from titles, and we refuse them in tags
_PANE_FIELDS = ("pane_id", "session_name", "window_id", "pane_pid", "pane_dead", "pane_dead_status",
                "pane_current_command", WINDOW_TAG, "pane_title", PANE_TAG)  # fmt: skip
PANE_FORMAT = _SEP.join(f"#{{{f}}}" for f in _PANE_FIELDS)  # the tag last: any text another program set


# -- where this process is -------------------------------------------------------------------------


def inside_tmux() -> bool:
    """Whether this process runs in a tmux pane (tmux sets $TMUX there)."""
    return bool(os.environ.get("TMUX"))


def current_pane() -> str | None:
    """This process's pane id ("%N") inside tmux; None outside, even when a stray $TMUX_PANE is set."""
    return (os.environ.get("TMUX_PANE") or None) if inside_tmux() else None


def client_env() -> dict[str, str]:
    """This environment for a tmux client taking over the terminal: no TMUX, so it attaches from inside tmux too."""
    return {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}


def enclosing_server() -> str | None:
    """The socket path of the tmux server this process runs in, or None outside tmux."""
    return os.environ.get("TMUX", "").split(",", 1)[0] or None


def socket_override() -> str | None:
    """$AGENTTEAMS_TMUX_SOCKET: the server commands should use instead of the enclosing or default one."""
    return os.environ.get(SOCKET_ENV, "").strip() or None


def default_socket() -> str | None:
    """The override, else the server we run in; None means tmux's own default server."""
    return socket_override() or enclosing_server()


def program() -> str | None:
    """The tmux program on PATH, or None."""
    import shutil  # here: `current_pane()` users (a teammate's start) need not load it

    return shutil.which("tmux")


def program_version(path: str, timeout: float = 5.0) -> str | None:
    """The first line `tmux -V` prints ("tmux 3.3a"), "" when it prints nothing, None when it cannot run in time."""
    import subprocess

    try:
        proc = subprocess.run([path, "-V"], capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (proc.stdout or proc.stderr).strip().splitlines()
    return lines[0].strip() if lines else ""


@dataclass(frozen=True)
class PaneRecord:
    """One pane of a server, as `list-panes` reports it."""

    pane_id: str  # "%N": unique on its server only
    session: str  # the session's name
    window: str  # the window's id ("@N")
    pid: int | None  # the pane's process (None when tmux did not say)
    dead: bool  # its process has exited (the pane is kept: remain-on-exit)
    exit_status: int | None  # the exit status of a dead pane's process
    command: str  # the pane's current foreground command
    teammate_window: bool  # in a window we created for teammates
    title: str
    tag: str  # the agent id (name@team) in the @agentteams-agent option; "" on panes we did not start

    @classmethod
    def parse(cls, row: str) -> PaneRecord | None:
        """A `PANE_FORMAT` row, or None for a malformed one."""
        parts = row.split(_SEP, len(_PANE_FIELDS) - 1)
        if len(parts) != len(_PANE_FIELDS) or not parts[0].startswith("%"):
            return None
        pane, session, window, pid, dead, status, command, ours, title, tag = parts
        return cls(pane, session, window, _number(pid), dead == "1", _number(status), command, ours == "1", title, tag)


def probe_panes(socket_path: str | None = None, timeout: float = 5.0) -> dict[str, PaneRecord] | None:
    """Every pane of a server (`socket_path`, else `default_socket()`) by id, from one `tmux list-panes` run
    straight: a look that starts no libtmux (its import, ~190 ms, was most of a `status` run). None when tmux is
    missing or no server answers in time."""
    import subprocess

    tmux = program()
    if tmux is None:
        return None
    socket = socket_path or default_socket()
    argv = [tmux, *(["-S", socket] if socket else []), "list-panes", "-a", "-F", PANE_FORMAT]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0 or proc.stderr:
        return None
    return {p.pane_id: p for p in map(PaneRecord.parse, proc.stdout.splitlines()) if p is not None}


def _number(text: str) -> int | None:
    return int(text) if text.lstrip("-").isdigit() else None


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


class TmuxBackend:
    """Starts, inspects and stops teammate panes on one tmux server."""

    def __init__(self, socket_path: str | None = None) -> None:
        self._socket = socket_path or default_socket()
        self._server: libtmux.Server | None = None

    @property
    def server(self) -> libtmux.Server:
        """libtmux's handle on the server, made at the first command: importing libtmux takes ~190 ms, which a lead
        pays only once it makes a pane (not while it starts and answers its first prompt)."""
        if self._server is None:
            import libtmux

            self._server = libtmux.Server(socket_path=self._socket)
        return self._server

    @property
    def socket_path(self) -> str | None:
        """The server's socket when it is not tmux's default one."""
        return self._socket or None

    @property
    def where(self) -> str:
        """The server, for messages: its socket path, or "the default socket"."""
        return self._socket or "the default socket"

    def run(self, *args: str) -> list[str]:
        """Run one tmux command (or several joined by ";"); its stdout lines, or a one-line TmuxError."""
        from libtmux import exc as tmux_exc

        try:
            proc = self.server.cmd(*args)
        except tmux_exc.LibTmuxException as e:
            raise TmuxError(f"tmux {args[0]}: {type(e).__name__}: {e}".strip()) from None
        if proc.returncode != 0 or proc.stderr:
            detail = "; ".join(proc.stderr) or f"exit status {proc.returncode}"
            raise TmuxError(f"tmux {args[0]} failed: {detail}")
        return list(proc.stdout)

    def client_argv(self, *args: str) -> list[str]:
        """A `tmux` client command line for this server, for a caller that hands its terminal over (exec)."""
        socket = self.socket_path
        return ["tmux", *(["-S", socket] if socket else []), *args]

    def list_panes(self) -> list[PaneRecord]:
        """Every pane of the server, in one command; TmuxError when no server answers."""
        return [p for p in map(PaneRecord.parse, self.run("list-panes", "-a", "-F", PANE_FORMAT)) if p is not None]

    def pane_map(self) -> dict[str, PaneRecord] | None:
        """Every pane of the server by id; None when no server answers (then panes tell nothing)."""
        try:
            return {p.pane_id: p for p in self.list_panes()}
        except TmuxError:
            return None

    def pane(self, pane_id: str) -> PaneRecord | None:
        """One pane, or None when the server has no such pane (or does not answer)."""
        try:
            rows = self.run("display-message", "-p", "-t", pane_id, PANE_FORMAT)
        except TmuxError:
            return None
        found = PaneRecord.parse(rows[0]) if rows else None
        return found if found is not None and found.pane_id == pane_id else None

    def has_session(self, name: str) -> bool:
        """Whether the server has a session named exactly `name`."""
        try:
            self.run("has-session", "-t", f"={name}")
        except TmuxError:
            return False
        return True

    def switch_client(self, target: str) -> bool:
        """Show `target` in the client attached to the server; False when there is none (a detached server)."""
        try:
            self.run("switch-client", "-t", target)
        except TmuxError:
            return False
        return True

    def _query(self, target: str, fmt: str) -> str | None:
        """`display-message -p` for `target`, or None when the target does not exist."""
        try:
            out = self.run("display-message", "-p", "-t", target, fmt)
        except TmuxError:
            return None
        return out[0] if out else ""

    def spawn_pane(
        self, target_pane: str | None, name: str, color: str, command: list[str] | str, cwd: Path,
        env: dict[str, str], *, tag: str | None = None,
    ) -> str:  # fmt: skip
        """Start `command` in a new pane named `name`, bordered in `color`; return its pane id ("%N").

        `tag` (an agent id) is stored in the pane option @agentteams-agent, so cleanup can find our panes."""
        return self.spawn_pane_process(target_pane, name, color, command, cwd, env, tag=tag)[0]

    def spawn_pane_process(
        self, target_pane: str | None, name: str, color: str, command: list[str] | str, cwd: Path,
        env: dict[str, str], *, tag: str | None = None,
    ) -> tuple[str, int | None]:  # fmt: skip
        """`spawn_pane`, also returning the pid of the pane's process (asked in the same tmux call): a caller can
        then watch that process through /proc instead of asking tmux about the pane every time."""
        line = build_command_line(command, cwd, env)
        if _CONTROL.search(name + color + (tag or "")) or not name or not color:
            raise ValueError("pane name and colour must be non-empty text without control characters")
        pane = self._placeholder_pane(target_pane)
        batch = self._decoration(pane, name, color)
        if tag:
            batch.append(("set-option", "-p", "-t", pane, PANE_TAG, tag))
        batch.append(("respawn-pane", "-k", "-t", pane, "--", line))
        batch.append(("display-message", "-p", "-t", pane, "#{pane_pid}"))
        out = self._run_batch(batch)
        return pane, _number(out[-1].strip()) if out else None

    def _run_batch(self, commands: list[tuple[str, ...]]) -> list[str]:
        """Several tmux commands in one client call (`a ; b`): ~6 ms each saved on the spawn path."""
        args: list[str] = []
        for command in commands:
            args += [*command, ";"]
        return self.run(*args[:-1])

    def _placeholder_pane(self, target_pane: str | None) -> str:
        """A new pane running `cat`: beside `target_pane`, or in the swarm session."""
        if target_pane is not None and _PANE_ID.match(target_pane):
            pane = self._split_if_room(target_pane)
            if pane is not None:
                return pane
            return self._pane_in_teammate_window(self._query(target_pane, "#{session_id}") or "")
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
        if not self.has_session(SWARM_SESSION):
            return self._new_window("new-session", "-s", SWARM_SESSION)
        return self._pane_in_teammate_window(f"={SWARM_SESSION}")

    def _pane_in_teammate_window(self, session: str) -> str:
        """Split a teammate window of `session` that has room, or open a new one."""
        rows = self.run("list-windows", "-t", session, "-F", f"#{{window_id}} #{{window_panes}} #{{{WINDOW_TAG}}}")
        for row in reversed(rows):
            window, count, *tag = row.split()
            if tag != ["1"] or int(count) >= MAX_PANES_PER_WINDOW:
                continue
            try:  # the window can close under us when its teammates exit
                first = self.run("list-panes", "-t", window, "-F", "#{pane_id}")[0]
                pane = self._split(first, window, layout="tiled")
            except TmuxError:
                continue
            if pane is not None:
                return pane
        return self._new_window("new-window", "-t", f"{session}:")

    def _new_window(self, verb: str, *target: str) -> str:
        """A new tagged teammate window (or session) whose one pane runs the placeholder."""
        out = self.run(verb, "-d", *target, "-P", "-F", "#{pane_id} #{window_id}", PLACEHOLDER)
        pane, window = out[0].split()
        self.run("set-option", "-w", "-t", window, WINDOW_TAG, "1")
        return pane

    def _split_if_room(self, beside: str) -> str | None:
        """`_split` when `beside`'s window has room, the check in the same tmux call (`if-shell -F`): one round trip
        where asking first took two. None when the window is full (or out of space)."""
        split = f"split-window -d -h -t {beside} -P -F '#{{pane_id}}' {PLACEHOLDER}"
        split += f" ; select-layout -t {beside} main-vertical"
        room = f"#{{<:#{{window_panes}},{MAX_PANES_PER_WINDOW}}}"
        try:
            out = self.run("if-shell", "-F", "-t", beside, room, split, f"display-message -p {FULL_MARK}")
        except TmuxError as e:
            if "no space" in str(e):
                return None
            if "can't find" in str(e):
                raise TmuxError(f"tmux pane {beside} does not exist") from None
            raise
        return out[0] if out and out[0].startswith("%") else None

    def _split(self, beside: str, window: str, layout: str = "main-vertical") -> str | None:
        """Split `beside` with the placeholder and re-layout; None when there is no room left."""
        try:
            out = self.run(
                "split-window", "-d", "-h", "-t", beside, "-P", "-F", "#{pane_id}", PLACEHOLDER, ";",
                "select-layout", "-t", window, layout,
            )  # fmt: skip
        except TmuxError as e:
            if "no space" in str(e):
                return None
            raise
        return out[0]

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
            self.run("kill-pane", "-t", pane_id)
        except TmuxError:
            if self._query(pane_id, "#{pane_id}") == pane_id:
                raise

    def select_pane(self, pane_id: str, zoom: bool) -> None:
        """Bring the pane's window forward, focus the pane, and zoom it (or un-zoom its window)."""
        self.run("select-window", "-t", pane_id)
        self.run("select-pane", "-t", pane_id)
        zoomed = self._query(pane_id, "#{window_zoomed_flag}") == "1"
        if zoom != zoomed:
            self.run("resize-pane", "-Z", "-t", pane_id)
