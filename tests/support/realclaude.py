"""Driving the real Claude Code CLI offline in tests: find it (the `claude` fixture), seed its home, its
environment, mock-script pieces, and an interactive-lead driver. The stand-in teammate program is standin.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agentteams.mockapi.reqtext import content_text
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = ("2.1.197", "2.1.330", "2.1.332")  # every interop test runs against each; .ci/run installs the same
NEWEST = VERSIONS[-1]  # the release ours follows where the versions differ (ccversions.TRAITS states how)
DEFAULT = NEWEST  # the benchmarks' baseline, and the one version where a test needs only one
PINNED = VERSIONS  # what .ci/run installs (a test checks)
CACHE = ROOT / ".cache" / "claude-code"  # .ci/run: npm install --prefix .cache/claude-code/<version>
POLL = 0.05  # seconds between looks at a real CLI (a look may run a tmux client)
API_KEY = "sk-ant-api03-offline-interop-tests-not-a-real-key-0123456789"
PACKAGE = "@anthropic-ai/claude-code"


class RealClaudeMissing(RuntimeError):
    """The real `claude` executable is not installed where the interop tests look for it."""


def prefix(version: str) -> Path:
    """The npm prefix this version is installed into."""
    return CACHE / version


def override_var(version: str) -> str:
    """The environment variable that points the tests at another executable of this version: CLAUDE_BIN_2_1_330."""
    return "CLAUDE_BIN_" + version.replace(".", "_")


def install_hint(version: str) -> str:
    return (
        f"run .ci/run, or `npm install --prefix {prefix(version)} --save-exact {PACKAGE}@{version}`, "
        f"or point {override_var(version)} at a claude {version} executable"
    )


def installed_version(where: Path) -> str | None:
    """The Claude Code version npm installed under prefix `where` (from its package.json), if any."""
    try:
        data = json.loads((where / "node_modules" / PACKAGE / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = data.get("version") if isinstance(data, dict) else None
    return version if isinstance(version, str) else None


def _install(version: str) -> None:
    """The project-local npm install of `version`, made on first use so that `python -m pytest -q` alone is
    enough. Checks, then installs (as .ci/run does); RealClaudeMissing if npm is missing or fails."""
    import fcntl
    import shutil

    where = prefix(version)
    npm = shutil.which("npm")
    if npm is None:
        raise RealClaudeMissing(f"the interop tests need the real Claude Code CLI, and npm is missing: "
                                f"{install_hint(version)}")  # fmt: skip
    where.mkdir(parents=True, exist_ok=True)
    with (CACHE / f".install-{version}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test processes must not install into one prefix at once
        if installed_version(where) == version and (where / "node_modules" / ".bin" / "claude").exists():
            return
        proc = subprocess.run(
            [npm, "install", "--prefix", str(where), "--save-exact", "--no-audit", "--no-fund", "--loglevel=error",
             f"{PACKAGE}@{version}"],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise RealClaudeMissing(f"npm install failed ({proc.stderr.strip()[-300:]}): {install_hint(version)}")


def claude_bin(version: str = DEFAULT) -> Path:
    """`$CLAUDE_BIN_<version>`, else the project-local npm install of `version` (made on first use);
    RealClaudeMissing when impossible."""
    if version not in PINNED:
        raise ValueError(f"Claude Code {version} is not one of the pinned versions {PINNED}")
    env = os.environ.get(override_var(version))
    path = Path(env) if env else prefix(version) / "node_modules" / ".bin" / "claude"
    if not env and installed_version(prefix(version)) != version:
        _install(version)
    if not (path.is_file() and os.access(path, os.X_OK)):
        where = override_var(version) if env else "the project-local install"
        raise RealClaudeMissing(f"real Claude Code CLI not found at {path} ({where}): {install_hint(version)}")
    return path


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _dump(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def seed_home(config_dir: Path, cwds: Iterable[Path], version: str, api_key: str = API_KEY) -> None:
    """Make interactive sessions of Claude Code `version` start with no dialog: onboarding done (for that version),
    key approved, `cwds` trusted.

    Merges into `config_dir/.claude.json` and `config_dir/settings.json` (bypass-permissions prompt skipped).
    """
    config_dir.mkdir(parents=True, exist_ok=True)
    state_file = config_dir / ".claude.json"
    state = _load(state_file)
    state.update({
        "hasCompletedOnboarding": True, "lastOnboardingVersion": version, "theme": "dark",
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
        "AGENTTEAMS_NO_WARM": "1",  # our CLI, run with this env too (a lead in a pane), leaves no warm -p server
    }
    env.update(extra or {})
    return env


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


def approving_route(me: dict[str, Any], name: str = "alice-shutdown") -> dict[str, Any]:
    """The route of a teammate (`me`: its match) whose latest prompt is a real lead's shutdown_request: it approves
    at once with a SendMessage to the lead."""
    approve = {"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True}
    turn = send_message_turn("team-lead", approve)
    return {"name": name, "match": {**me, "last_prompt": "shutdown_request"}, "turns": [turn]}


def message_tags(requests: list[dict[str, Any]], marker: str) -> list[str]:
    """The opening tag of every `<teammate-message>` block holding `marker`, in request order, each block once."""
    seen: dict[str, str] = {}
    block = re.compile(r"(<teammate-message[^>]*>)((?:(?!</teammate-message>).)*)", re.S)
    for r in requests:
        for m in r["body"]["messages"]:
            if m["role"] != "user":
                continue
            for found in block.finditer(content_text(m.get("content"))):
                if marker in found.group(2):
                    seen.setdefault(found.group(2), found.group(1))
    return list(seen.values())


# -- processes ---------------------------------------------------------------------------------------


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

    def __init__(self, tmux: Tmux, claude: Path, env: dict[str, str], cwd: Path, args: Sequence[str] = ()) -> None:
        self.tmux = tmux
        self.config_dir = Path(env["CLAUDE_CONFIG_DIR"])
        self.started = time.monotonic()
        argv = [str(claude), "--dangerously-skip-permissions", "--teammate-mode", "tmux", *args]
        self.pane = tmux.start(env, cwd, argv, session="lead")
        pid = tmux.panes()[self.pane].pid
        assert pid is not None
        self.pid = pid  # tmux execs a multi-word command directly: this is the claude process

    def screen(self) -> str:
        return self.tmux.capture(self.pane)

    def wait_ready(self, timeout: float = 30.0) -> float:
        """Wait for the prompt box and the bypass-permissions footer; seconds since start."""
        wait_until(
            lambda: all(m in self.screen() for m in self.READY_MARKS), timeout, "the lead's prompt box", interval=POLL
        )
        return time.monotonic() - self.started

    def submit(self, text: str, timeout: float = 10.0) -> None:
        """Type `text` into the prompt box, wait until it shows, then press Enter."""
        self.tmux.send(self.pane, text, literal=True)
        wait_until(lambda: text in self.screen(), timeout, f"{text!r} to show in the lead's prompt box", interval=POLL)
        self.tmux.send(self.pane, "Enter")

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

        wait_until(settled, timeout, f"the lead to stay idle for {quiet:g}s", interval=POLL)

    def exit(self, timeout: float = 20.0) -> None:
        """Quit the way a user does (`/exit`) once quiet, so its exit-time cleanup runs; wait for its pane to end."""
        self.wait_quiet()
        self.submit("/exit")
        wait_until(lambda: self.tmux.exited_ok(self.pane), timeout, "the lead to exit", interval=POLL)


def lead_team(config_dir: Path) -> str | None:
    """The session team (`session-<8 hex>`) a real interactive lead created under `config_dir`, if any."""
    found = sorted(p.parent.name for p in (config_dir / "teams").glob("session-*/config.json"))
    return found[0] if found else None


def read_config(path: Path) -> dict[str, Any]:
    """A team config a real CLI may be rewriting in place (2.1.330 writes, then truncates): read as our store
    reads it (again under its lock when a read catches the writer between the two)."""
    from agentteams.store.file.teams import TeamStore
    from agentteams.store.paths import Layout

    return TeamStore(Layout(path.parent.parent.parent)).read(path.parent.name).to_json()


def member_of(config_file: Path, name: str) -> dict[str, Any] | None:
    """`name`'s entry in a team config a real CLI writes: None while it is not there, or the file not there or not
    readable yet."""
    from agentteams.errors import AgentTeamsError

    try:
        members = read_config(config_file)["members"]
    except (OSError, ValueError, KeyError, AgentTeamsError):
        return None
    return next((m for m in members if m.get("name") == name), None)
