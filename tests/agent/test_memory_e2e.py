"""Memory end to end: a scratch git repository with every kind of memory file, `agentteams -p` (alone and with an
in-process teammate) against the scripted server, `/memory` in the REPL, and what memory adds to a start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.procs import child_env
from tests.support.repo import ROOT
from tests.support.team_script import REQUEST_ID, say, tool, waiting

pytestmark = pytest.mark.proc  # every test runs our CLI, or a benchmark script that does

SCRIPTS = ROOT / "scripts"
KEY = "test-key-memory-0123456789abcdef"
MARKS = ["USER-MEMORY-0", "PROJECT-MEMORY-1", "IMPORTED-MEMORY-2", "DOTCLAUDE-MEMORY-3", "LOCAL-MEMORY-4"]


@pytest.fixture
def repo(tmp_path: Path, config_root: Path) -> Path:
    d = tmp_path / "repo"
    (d / "docs").mkdir(parents=True)
    (d / ".claude").mkdir()
    subprocess.run(["git", "init", "-q", str(d)], check=True)
    (config_root / "CLAUDE.md").write_text(f"{MARKS[0]}: answer briefly.\n")
    (d / "CLAUDE.md").write_text(f"{MARKS[1]}: run the tests.\nStyle: @docs/style.md\n")
    (d / "docs" / "style.md").write_text(f"{MARKS[2]}: four spaces.\n")
    (d / ".claude" / "CLAUDE.md").write_text(f"{MARKS[3]}: no new dependencies.\n")
    (d / "CLAUDE.local.md").write_text(f"{MARKS[4]}: my sandbox is at localhost:8080.\n")
    return d


def env_for(config_root: Path, server: MockServer) -> dict[str, str]:
    env = child_env(config_root)
    env.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.base_url, CLAUDE_CODE_MAX_RETRIES="1",
               PYTHONIOENCODING="utf-8")  # fmt: skip
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    return env


def first_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def assert_memory_in_order(body: dict[str, Any]) -> None:
    text = first_user_text(body)
    positions = [text.find(m) for m in MARKS]
    assert -1 not in positions, f"missing memory in the first user message: {text[:2000]}"
    assert positions == sorted(positions), positions
    system = json.dumps(body.get("system"))
    assert not any(m in system for m in MARKS), "Claude Code puts memory in the first user message, not the system"


def test_headless_run_sends_every_memory_file_in_order(cli: Cli, config_root: Path, repo: Path) -> None:
    script = {"routes": [{"name": "main", "match": {"tools": True},
                          "turns": [tool("Bash", command="echo hi"), say("MEMORY-RUN-DONE")]}]}  # fmt: skip
    with MockServer(script) as server:
        proc = cli("-p", "PROMPT-TEXT", "--dangerously-skip-permissions", cwd=repo, env=env_for(config_root, server))
        bodies = [r["body"] for r in server.requests if r.get("route") == "main"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "MEMORY-RUN-DONE" and len(bodies) == 2
    for body in bodies:
        assert_memory_in_order(body)
        assert first_user_text(body).rstrip().endswith("PROMPT-TEXT")  # memory first, then the prompt
    assert first_user_text(bodies[0]) == first_user_text(bodies[1])  # stable: the cached prefix is reused


def team_script() -> dict[str, Any]:
    lead = [
        tool("TeamCreate", team_name="memteam"),
        tool("Task", name="alice", team_name="memteam", description="helper", prompt="You are alice. START-alice"),
        say("Alice is at work."),
        {**tool("SendMessage", to="alice", message={"type": "shutdown_request", "reason": "done"}),
         "wait_for": "ALICE-HELLO"},
        waiting("Waiting for alice."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("TEAM-DONE"),
    ]  # fmt: skip
    shutdown = tool("SendMessage", to="team-lead",
                    message={"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True})  # fmt: skip
    return {"routes": [
        {"name": "alice-shutdown", "match": {"system": "Your name is alice", "last_prompt": "shutdown_request"},
         "turns": [shutdown] * 2},
        {"name": "alice", "match": {"system": "Your name is alice"},
         "turns": [tool("SendMessage", to="team-lead", message="ALICE-HELLO", summary="hello"), say("Hi.")],
         "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def test_a_teammate_gets_the_memory_too(cli: Cli, config_root: Path, repo: Path) -> None:
    with MockServer(team_script()) as server:
        proc = cli("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", cwd=repo,
                   env=env_for(config_root, server), timeout=90)  # fmt: skip
        requests = list(server.requests)
    assert proc.returncode == 0, proc.stderr
    assert "TEAM-DONE" in proc.stdout
    by_route: dict[str, list[dict[str, Any]]] = {}
    for r in requests:
        by_route.setdefault(str(r.get("route")), []).append(r["body"])
    assert by_route.get("alice") and by_route.get("lead"), list(by_route)
    for body in by_route["alice"] + by_route["lead"]:
        assert_memory_in_order(body)
    assert "START-alice" in first_user_text(by_route["alice"][0])


def test_memory_command_in_the_repl(cli: Cli, config_root: Path, repo: Path) -> None:
    with MockServer({"routes": []}) as server:
        proc = cli("--teammate-mode", "in-process", input="/memory\n", cwd=repo, env=env_for(config_root, server))
        assert server.requests == [], "/memory must not reach the model"
    assert proc.returncode == 0, proc.stderr
    for path in (config_root / "CLAUDE.md", repo / "CLAUDE.md", repo / "docs" / "style.md",
                 repo / ".claude" / "CLAUDE.md", repo / "CLAUDE.local.md"):  # fmt: skip
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith(f"{path} ·")), None)
        assert line is not None, proc.stdout
        assert f"· {path.stat().st_size} B ·" in line
    assert f"imported by {repo / 'CLAUDE.md'}" in proc.stdout


def test_version_does_not_import_the_memory_code(cli: Cli, repo: Path) -> None:
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(sorted(m for m in sys.modules if m.startswith('agentteams.agent'))))\n"
        "sys.argv = ['agentteams', '--version']\n"
        "from agentteams.cli import main\n"
        "main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=cli.env(), cwd=repo, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout


def test_bench_memory_runs_and_memory_reaches_the_model(tmp_path: Path, config_root: Path) -> None:
    out = tmp_path / "memory.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "bench_memory.py"), "--runs", "1", "--json", str(out)],
        env=child_env(config_root), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["starts"]["memory_reached_model"] is True  # speed is judged by the script, not here
    assert data["loader"]["files"] == 5
