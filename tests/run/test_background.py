"""Background sessions, as a person uses them: `--bg` returns at once with an id, the session answers on its own
(its tmux server outlives the terminal that started it), `agents` lists it with its state, `logs` and `attach` show
it, `respawn` brings it back with its conversation, `stop` ends it leaving nothing behind, `rm` takes it off the
list."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.procs import processes_with_env
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

pytestmark = pytest.mark.tmux  # each session is a tmux server of its own

KEY = "sk-ant-test-background-0000"


@pytest.fixture
def bg_env(cli: Cli, config_root: Path) -> Iterator[dict[str, str]]:
    """The environment a person's shell would have: a short private runtime dir (the sessions' sockets), a key."""
    runtime = Path(tempfile.mkdtemp(prefix="bg", dir="/tmp"))
    env = {**cli.env(), "XDG_RUNTIME_DIR": str(runtime), "ANTHROPIC_API_KEY": KEY, "CLAUDE_CODE_SANDBOXED": "1"}
    yield env
    for sock in (runtime / "agentteams").glob("bg-*.sock"):  # a failed test's sessions: stopped, not left running
        Tmux(sock).stop()
    shutil.rmtree(runtime, ignore_errors=True)


def _agents(cli: Cli, env: dict[str, str], *flags: str) -> list[dict[str, Any]]:
    proc = cli("agents", "--json", *flags, env=env)
    assert proc.returncode == 0, proc.stderr
    rows: list[dict[str, Any]] = json.loads(proc.stdout)
    return rows


def _state(cli: Cli, env: dict[str, str], job: str) -> str | None:
    return next((r["state"] for r in _agents(cli, env, "--all") if r["id"] == job), None)


def test_a_background_session_answers_on_its_own_and_stops_leaving_nothing(
    cli: Cli, bg_env: dict[str, str], tmp_path: Path, config_root: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with MockServer({"fallback": "ANSWERED-IN-BACKGROUND"}) as server:
        env = {**bg_env, "ANTHROPIC_BASE_URL": server.base_url}
        started = time.monotonic()
        proc = cli("--bg", "say hi", "-n", "chores", env=env, cwd=work)
        took = time.monotonic() - started
        assert proc.returncode == 0, proc.stderr
        found = re.match(r"backgrounded · ([0-9a-f]{8}) · chores\n", proc.stdout)
        assert found is not None, proc.stdout
        job = found.group(1)
        assert took < 10, f"--bg took {took:.1f} s to return"
        wait_until(lambda: _state(cli, env, job) == "idle", 30, "the session to answer and go idle",
                   explain=lambda: str(_agents(cli, env, "--all")))  # fmt: skip
        [row] = _agents(cli, env)
        assert {k: row[k] for k in ("id", "cwd", "kind", "name", "state")} == {
            "id": job, "cwd": str(work), "kind": "background", "name": "chores", "state": "idle",
        }  # fmt: skip
        assert row["sessionId"].startswith(job) and isinstance(row["startedAt"], int)
        assert server.requests and "say hi" in json.dumps(server.requests[0]["body"]["messages"])
        assert KEY not in json.dumps(row) and KEY not in (config_root / "jobs" / job / "state.json").read_text()
        logs = cli("logs", job, env=env)
        assert logs.returncode == 0 and "ANSWERED-IN-BACKGROUND" in logs.stdout, logs.stderr
        table = cli("agents", env=env)
        assert job in table.stdout and "idle" in table.stdout and "chores" in table.stdout

        stopped = cli("stop", job, env=env)
        assert stopped.returncode == 0 and stopped.stdout.strip() == f"stopped {job}", stopped.stderr
        assert _agents(cli, env) == [] and _state(cli, env, job) == "stopped"
        wait_until(lambda: processes_with_env("CLAUDE_CONFIG_DIR", str(config_root)) == [], 15,
                   "every process of the session to be gone")  # fmt: skip
        assert list((Path(env["XDG_RUNTIME_DIR"]) / "agentteams").glob("bg-*.sock")) == []


def test_it_outlives_the_terminal_that_started_it_and_comes_back_with_its_conversation(
    cli: Cli, bg_env: dict[str, str], tmp_path: Path, tmux: Tmux
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = {"fallback": "first answer", "routes": [
        {"name": "again", "match": {"last_prompt": "and again"}, "turns": [{"text": "SECOND-ANSWER"}]},
    ]}  # fmt: skip
    with MockServer(script) as server:
        env = {**bg_env, "ANTHROPIC_BASE_URL": server.base_url}
        out = tmp_path / "bg.out"
        pane = tmux.start(env, work, ["sh", "-c", f"{cli.line('--bg', 'first task')} > {out} 2>&1; sleep 60"])
        wait_until(lambda: "backgrounded" in (out.read_text() if out.exists() else ""), 20, "the --bg line")
        job = out.read_text().split()[2]
        tmux.stop()  # the terminal closes: its tmux server, its shell and everything they ran are gone
        assert pane
        wait_until(lambda: _state(cli, env, job) == "idle", 30, "the session to answer though its terminal is gone")

        respawned = cli("respawn", job, env=env)
        assert respawned.returncode == 0, respawned.stderr
        wait_until(lambda: "first task" in cli("logs", job, env=env).stdout, 30, "the resumed conversation shown")

        viewer = Tmux(tmp_path / "viewer.sock")
        try:  # `attach` from another terminal shows the session, and the person can go on typing into it
            seen = viewer.start(env, work, ["sh", "-c", cli.line("attach", job)])
            wait_until(lambda: "first task" in viewer.capture(seen), 20, "the session in the attaching terminal",
                       explain=lambda: viewer.capture(seen))  # fmt: skip
            viewer.send(seen, "and again", literal=True)
            viewer.send(seen, "Enter")
            wait_until(lambda: "SECOND-ANSWER" in cli("logs", job, env=env).stdout, 30, "the answer to a typed line")
        finally:
            viewer.stop()
        assert _state(cli, env, job) in ("idle", "working")  # detaching (the viewer gone) leaves it running

        assert cli("rm", job, env=env).returncode == 1  # running: stop first
        assert cli("stop", job, env=env).returncode == 0
        removed = cli("rm", job, env=env)
        assert removed.returncode == 0 and _agents(cli, env, "--all") == [], removed.stderr


def test_bg_with_print_is_refused_and_unknown_sessions_are_one_line(cli: Cli, bg_env: dict[str, str]) -> None:
    proc = cli("--bg", "-p", "hi", env=bg_env)
    assert proc.returncode == 1 and "--bg cannot go with --print" in proc.stderr, proc.stderr
    for verb in ("stop", "logs", "attach", "rm", "respawn"):
        proc = cli(verb, "deadbeef", env=bg_env)
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1, (verb, proc.stderr)
        assert "no background session 'deadbeef'" in proc.stderr, (verb, proc.stderr)
