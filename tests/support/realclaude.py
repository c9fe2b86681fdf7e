"""Driving the real Claude Code CLI offline in tests: find it, seed its home, its environment, private tmux.

Also an interactive-lead driver and a stand-in teammate program (run as this file: `standin LOG <claude argv>`).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
VERSION = "2.1.197"  # the version .ci/run installs; keep the two in step
PREFIX = ROOT / ".cache" / "claude-code"  # .ci/run: npm install --prefix .cache/claude-code
API_KEY = "sk-ant-api03-offline-interop-tests-not-a-real-key-0123456789"
INSTALL_HINT = (
    f"run .ci/run, or `npm install --prefix {PREFIX} --save-exact @anthropic-ai/claude-code@{VERSION}`, "
    "or point CLAUDE_BIN at a claude executable"
)


class RealClaudeMissing(RuntimeError):
    """The real `claude` executable is not installed where the interop tests look for it."""


def _install() -> None:
    """The project-local npm install, made on first use so that `python -m pytest -q` alone is enough."""
    import fcntl
    import shutil

    npm = shutil.which("npm")
    if npm is None:
        raise RealClaudeMissing(f"the interop tests need the real Claude Code CLI, and npm is missing: {INSTALL_HINT}")
    PREFIX.mkdir(parents=True, exist_ok=True)
    with (PREFIX.parent / ".claude-code.install-lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test processes must not install into one prefix at once
        if (PREFIX / "node_modules" / ".bin" / "claude").exists():
            return
        proc = subprocess.run(
            [npm, "install", "--prefix", str(PREFIX), "--save-exact", "--no-audit", "--no-fund",
             f"@anthropic-ai/claude-code@{VERSION}"],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise RealClaudeMissing(f"npm install failed ({proc.stderr.strip()[-300:]}): {INSTALL_HINT}")


def claude_bin() -> Path:
    """`$CLAUDE_BIN`, else the project-local npm install (made on first use); RealClaudeMissing when impossible."""
    env = os.environ.get("CLAUDE_BIN")
    path = Path(env) if env else PREFIX / "node_modules" / ".bin" / "claude"
    if not env and not path.exists():
        _install()
    if not (path.is_file() and os.access(path, os.X_OK)):
        where = "CLAUDE_BIN" if env else "the project-local install"
        raise RealClaudeMissing(f"real Claude Code CLI not found at {path} ({where}): {INSTALL_HINT}")
    return path


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _dump(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def seed_home(config_dir: Path, cwds: Iterable[Path], api_key: str = API_KEY) -> None:
    """Make interactive sessions start with no dialog: onboarding done, key approved, `cwds` trusted.

    Merges into `config_dir/.claude.json` and `config_dir/settings.json` (bypass-permissions prompt skipped).
    """
    config_dir.mkdir(parents=True, exist_ok=True)
    state_file = config_dir / ".claude.json"
    state = _load(state_file)
    state.update({
        "hasCompletedOnboarding": True, "lastOnboardingVersion": VERSION, "theme": "dark",
        "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
        "bypassPermissionsModeAccepted": True, "autoUpdates": False,
    })  # fmt: skip
    projects = state.setdefault("projects", {})
    for cwd in cwds:
        project = projects.setdefault(str(Path(cwd).resolve()), {})
        project.update({"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True, "allowedTools": []})
    _dump(state_file, state)
    settings_file = config_dir / "settings.json"
    settings = _load(settings_file)
    settings["skipDangerousModePermissionPrompt"] = True
    _dump(settings_file, settings)


def claude_env(
    config_dir: Path, base_url: str, api_key: str = API_KEY, extra: dict[str, str] | None = None,
    home: Path | None = None,
) -> dict[str, str]:  # fmt: skip
    """The whole environment for an offline real `claude` (nothing inherited but PATH).

    HOME defaults to a `home` directory beside `config_dir`, so the CLI never touches the real one.
    """
    home = home if home is not None else config_dir.parent / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": api_key,
        "CLAUDE_CONFIG_DIR": str(config_dir),
        "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "IS_SANDBOX": "1",  # lets --dangerously-skip-permissions run as root
    }
    env.update(extra or {})
    return env


def wait_for(cond: Callable[[], bool], timeout: float, what: str, interval: float = 0.05) -> float:
    """Poll `cond` until true; the seconds it took. AssertionError (naming `what`) after `timeout`."""
    start = time.monotonic()
    while not cond():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)
    return time.monotonic() - start


# -- mock-script pieces -----------------------------------------------------------------------------

REQUEST_ID = r'{{re:requestId\W+([^\s"\\]+)}}'  # echoes the requestId of the latest shutdown_request


def main_route(name: str, marker: str, turns: list[Any], idle: str = "Idle.") -> dict[str, Any]:
    """A mock route for a real CLI's main-agent requests that mention `marker`.

    `tools: true` keeps its side requests (title generation: no tools, same conversation text) off the route.
    """
    return {"name": name, "match": {"tools": True, "any": marker}, "turns": turns, "idle": idle}


def send_message_turn(to: str, message: str | dict[str, Any], summary: str | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"to": to, "message": message}
    if summary is not None:
        args["summary"] = summary
    return {"content": [{"type": "tool_use", "name": "SendMessage", "input": args}]}


def approve_shutdown_turn(lead: str = "team-lead") -> dict[str, Any]:
    """Once a shutdown_request is the latest user turn: SendMessage a shutdown_response approving it."""
    turn = send_message_turn(lead, {"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True})
    return {"wait_for_last": "shutdown_request", **turn}


# -- a private tmux server ---------------------------------------------------------------------------


class Tmux:
    """A tmux server of our own on socket `sock`; its global environment is the one it was started with."""

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

    def start(self, env: dict[str, str], cwd: Path, command: Sequence[str], session: str = "main") -> str:
        """Start the server with `env` (no config file) and a session running `command`; its pane id."""
        return self.run(
            "-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "200", "-y", "50", "-c", str(cwd),
            "-P", "-F", "#{pane_id}", *command, env=env,
        )  # fmt: skip

    def capture(self, target: str) -> str:
        return self.run("capture-pane", "-p", "-J", "-t", target, check=False)

    def type_text(self, target: str, text: str) -> None:
        self.run("send-keys", "-t", target, "-l", text)

    def press(self, target: str, *keys: str) -> None:
        self.run("send-keys", "-t", target, *keys)

    def panes(self) -> dict[str, tuple[bool, int | None, int | None]]:
        """Every pane: id -> (dead, exit status or None, pid or None)."""
        out = self.run("list-panes", "-a", "-F", "#{pane_id}|#{pane_dead}|#{pane_dead_status}|#{pane_pid}", check=False)
        panes: dict[str, tuple[bool, int | None, int | None]] = {}
        for line in out.splitlines():
            pane, dead, status, pid = line.split("|")
            panes[pane] = (dead == "1", int(status) if status else None, int(pid) if pid else None)
        return panes

    def reap(self) -> None:
        """Send the server SIGCHLD: tmux 3.3a at times misses a pane process's exit (tmux issue #311, its
        utempter SIGCHLD handler), leaving the pane dead, the process a zombie and the status unknown."""
        pid = self.run("display-message", "-p", "#{pid}", check=False)
        if pid.isdigit():
            os.kill(int(pid), signal.SIGCHLD)

    def pane_exited_ok(self, pane: str) -> bool:
        """True once the pane is gone, or dead with exit status 0 (reaping a missed exit on the way)."""
        state = self.panes().get(pane)
        if state is not None and state[0] and state[1] is None:
            self.reap()
            state = self.panes().get(pane)
        return state is None or (state[0] and state[1] == 0)

    def kill_server(self) -> None:
        self.run("kill-server", check=False)


# -- processes ---------------------------------------------------------------------------------------


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return raw.decode("utf-8", "replace").split("\0")[:-1]


def _children(pid: int) -> list[int]:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids: list[int] = []
    for task in tasks:
        try:
            kids += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except OSError:
            continue
    return kids


def find_process(root: int, marker: str) -> int | None:
    """`root` or the first descendant whose argv contains `marker` (e.g. "--agent-name")."""
    todo = [root]
    while todo:
        pid = todo.pop(0)
        if marker in _cmdline(pid):
            return pid
        todo += _children(pid)
    return None


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def peak_rss_kb(pid: int) -> int | None:
    """The process's peak resident set (VmHWM) in kB, or None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class PeakRss:
    """Samples a process's VmHWM every 20 ms in a thread, so the peak survives the process's exit."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name=f"rss:{pid}", daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            kb = peak_rss_kb(self.pid)
            if kb is None:
                return
            self.kb = max(self.kb, kb)
            self._stop.wait(0.02)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join(timeout=5)
        return self.kb


# -- an interactive real lead ------------------------------------------------------------------------


class RealLead:
    """A real interactive `claude` lead in the first pane of a private tmux server."""

    READY_MARKS = ("❯", "bypass permissions")

    def __init__(self, tmux: Tmux, env: dict[str, str], cwd: Path, args: Sequence[str] = ()) -> None:
        self.tmux = tmux
        self.config_dir = Path(env["CLAUDE_CONFIG_DIR"])
        self.started = time.monotonic()
        argv = [str(claude_bin()), "--dangerously-skip-permissions", "--teammate-mode", "tmux", *args]
        self.pane = tmux.start(env, cwd, argv, session="lead")
        pid = tmux.panes()[self.pane][2]
        assert pid is not None
        self.pid = pid  # tmux execs a multi-word command directly: this is the claude process

    def screen(self) -> str:
        return self.tmux.capture(self.pane)

    def wait_ready(self, timeout: float = 30.0) -> float:
        """Wait for the prompt box and the bypass-permissions footer; seconds since start."""
        wait_for(lambda: all(m in self.screen() for m in self.READY_MARKS), timeout, "the lead's prompt box")
        return time.monotonic() - self.started

    def submit(self, text: str, timeout: float = 10.0) -> None:
        """Type `text` into the prompt box, wait until it shows, then press Enter."""
        self.tmux.type_text(self.pane, text)
        wait_for(lambda: text in self.screen(), timeout, f"{text!r} to show in the lead's prompt box")
        self.tmux.press(self.pane, "Enter")

    def status(self) -> str | None:
        """`idle` or `busy`, from the lead's `sessions/<pid>.json`; None while it has none."""
        try:
            data = json.loads((self.config_dir / "sessions" / f"{self.pid}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        status = data.get("status") if isinstance(data, dict) else None
        return status if isinstance(status, str) else None

    def inbox_empty(self) -> bool:
        """True when the lead's inbox holds nothing unread (it prunes what it delivers)."""
        team = lead_team(self.config_dir)
        if team is None:
            return True
        try:
            inbox = json.loads((self.config_dir / "teams" / team / "inboxes" / "team-lead.json").read_text("utf-8"))
        except FileNotFoundError:
            return True
        except ValueError:
            return False
        return not any(isinstance(e, dict) and e.get("read") is not True for e in inbox)

    def wait_quiet(self, timeout: float = 30.0, quiet: float = 1.5) -> None:
        """Wait until the lead has been idle with an empty inbox for `quiet` s on end (its inbox poll is 1 s),
        so that nothing it is about to pick up can start a turn under us."""
        since: list[float] = []

        def settled() -> bool:
            if self.status() != "idle" or not self.inbox_empty():
                since.clear()
                return False
            if not since:
                since.append(time.monotonic())
            return time.monotonic() - since[0] >= quiet

        wait_for(settled, timeout, f"the lead to stay idle for {quiet:g}s")

    def exit(self, timeout: float = 20.0) -> None:
        """Quit the way a user does (`/exit`) once quiet, so its exit-time cleanup runs; wait for its pane to end."""
        self.wait_quiet()
        self.submit("/exit")
        wait_for(lambda: self.tmux.pane_exited_ok(self.pane), timeout, "the lead to exit")


def lead_team(config_dir: Path) -> str | None:
    """The session team (`session-<8 hex>`) a real interactive lead created under `config_dir`, if any."""
    found = sorted(p.parent.name for p in (config_dir / "teams").glob("session-*/config.json"))
    return found[0] if found else None


# -- a stand-in teammate program ---------------------------------------------------------------------


def write_standin(path: Path, log: Path) -> Path:
    """An executable `path` for CLAUDE_CODE_TEAMMATE_COMMAND that runs the stand-in, logging to `log`."""
    line = shlex.join([sys.executable, str(Path(__file__).resolve()), "standin", str(log)])
    path.write_text(f'#!/bin/sh\nexec {line} "$@"\n', encoding="utf-8")
    path.chmod(0o755)
    return path


def read_events(log: Path) -> list[dict[str, Any]]:
    """The stand-in's log: one event per complete line."""
    try:
        raw = log.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in raw.split("\n")[:-1]]


STANDIN_REPLY = "STANDIN-REPLY"


def standin(log: Path, argv: list[str], deadline: float = 60.0) -> int:
    """A minimal teammate: log how it was started, answer the first plain message to the lead, report idle,
    approve a shutdown_request and exit 0. Uses our own mailbox; logs every step as one JSON line."""
    from agentteams.store.atomicjson import now_iso
    from agentteams.store.mailbox import Mailbox
    from agentteams.store.paths import Layout
    from agentteams.store.protocol import IdleNotification, ShutdownApproved, ShutdownRequest, parse_message

    def emit(event: str, **data: Any) -> None:
        with log.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"event": event, "t": time.time(), **data}) + "\n")

    emit("start", argv=argv, env=dict(os.environ), cwd=os.getcwd())
    name, team = argv[argv.index("--agent-name") + 1], argv[argv.index("--team-name") + 1]
    mailbox = Mailbox(Layout.from_env())
    seen: set[tuple[str, ...]] = set()
    replied = False
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        fresh = [e for e in mailbox.unread(team, name) if e.identity not in seen]
        for env in fresh:
            seen.add(env.identity)
            emit("got", envelope=env.to_json())
            message = parse_message(env.text)
            if isinstance(message, ShutdownRequest):
                approved = ShutdownApproved(
                    request_id=message.request_id, sender=name, timestamp=now_iso(),
                    pane_id=os.environ.get("TMUX_PANE", ""), backend_type="tmux",
                )  # fmt: skip
                mailbox.send(team, env.sender, approved.to_text(), sender=name)
                mailbox.mark_delivered(team, name, fresh)
                emit("exit", code=0)
                return 0
            if message is None and not replied:
                replied = True
                mailbox.send(team, env.sender, f"{STANDIN_REPLY} from {name}", sender=name, summary="reply")
                idle = IdleNotification(sender=name, timestamp=now_iso())
                mailbox.send(team, env.sender, idle.to_text(), sender=name)
                emit("replied", to=env.sender)
        if fresh:
            mailbox.mark_delivered(team, name, fresh)
        time.sleep(0.05)
    emit("exit", code=3)
    return 3


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "standin":
        return standin(Path(argv[1]), argv[2:])
    print("usage: realclaude.py standin LOG <teammate argv>", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
