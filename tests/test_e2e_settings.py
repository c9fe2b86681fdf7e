"""End to end: `agentteams -p` as a real process in a scratch git repository with user, project and local
settings files, against the scripted server: precedence, rules, env, apiKeyHelper; a malformed file; `config`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.model.aliases import resolve_model
from tests.support.cli import Cli
from tests.test_e2e_headless import result_text, script, tool, tool_results

HELPER_KEY = "sk-from-helper-0123456789abcdef"


@pytest.fixture
def repo(tmp_path: Path, config_root: Path) -> Path:
    """A scratch git repository with the three settings files a Claude Code user may have."""
    d = tmp_path / "repo"
    (d / ".claude").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(d)], check=True)
    (d / "notes.txt").write_text("keep me\n")
    helper = tmp_path / "key-helper.sh"
    helper.write_text(f"#!/bin/sh\ntouch {tmp_path / 'helper-ran'}\necho {HELPER_KEY}\n")
    helper.chmod(0o755)
    (config_root / "settings.json").write_text(json.dumps({
        "env": {"SETTINGS_MARK": "from-user-settings"}, "model": "opus", "apiKeyHelper": str(helper),
        "permissions": {"allow": ["Bash(echo:*)"]},
    }))  # fmt: skip
    (d / ".claude" / "settings.json").write_text(json.dumps({"model": "sonnet", "permissions": {
        "deny": ["Bash(rm:*)"], "allow": ["Bash(cat:*)"]}}))  # fmt: skip
    (d / ".claude" / "settings.local.json").write_text(json.dumps({"model": "haiku", "unknownKey": {"x": 1}}))
    return d


@pytest.fixture
def servers() -> Iterator[list[MockServer]]:
    started: list[MockServer] = []
    yield started
    for s in started:
        s.stop()


def run(cli: Cli, repo: Path, server: MockServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli.env()
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "SETTINGS_MARK"):
        env.pop(name, None)  # the key must come from apiKeyHelper
    env.update(ANTHROPIC_BASE_URL=server.base_url, CLAUDE_CODE_MAX_RETRIES="1")
    return cli("-p", "go", *args, env=env, cwd=repo, timeout=120)


SESSION = script(
    tool("Bash", command="echo mark=$SETTINGS_MARK"), tool("Bash", command="rm notes.txt"),
    tool("Bash", command="touch other.txt"), "done",
)  # fmt: skip


def test_settings_files_drive_a_headless_run(
    cli: Cli, repo: Path, config_root: Path, servers: list[MockServer]
) -> None:
    server = MockServer(SESSION).start()
    servers.append(server)
    proc = run(cli, repo, server)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "done" and proc.stderr == ""  # an unknown key is no problem
    echo, rm, touch = tool_results(server)
    assert not echo.get("is_error") and "mark=from-user-settings" in result_text(echo)  # env, and an allow rule
    assert rm["is_error"] and "Bash(rm:*)" in result_text(rm) and ".claude/settings.json" in result_text(rm)
    assert touch["is_error"] and "non-interactive" in result_text(touch)  # no rule: headless default denies
    assert (repo / "notes.txt").exists() and not (repo / "other.txt").exists()
    models = {r["body"]["model"] for r in server.requests if r["path"].startswith("/v1/messages")}
    assert models == {resolve_model("haiku")}  # local over project over user
    assert (repo.parent / "helper-ran").exists()
    written = [p.read_text(errors="replace") for p in config_root.rglob("*") if p.is_file()]
    assert not any(HELPER_KEY in t for t in [proc.stdout, proc.stderr, *written])


def test_flags_win_and_a_malformed_file_is_one_line(cli: Cli, repo: Path, servers: list[MockServer]) -> None:
    bad = repo / ".claude" / "settings.json"
    bad.write_text('{\n  "permissions": {"deny": ["Bash(rm:*)"],}\n}\n')
    server = MockServer(script(tool("Bash", command="rm notes.txt"), "done")).start()
    servers.append(server)
    proc = run(cli, repo, server, "--model", "sonnet", "--settings", '{"permissions": {"allow": ["Bash(rm:*)"]}}')
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("agentteams: warning: project settings") and f"{bad}:2:" in line
    [rm] = tool_results(server)
    assert not rm.get("is_error") and not (repo / "notes.txt").exists()  # the bad file's deny rule is not in force
    models = {r["body"]["model"] for r in server.requests if r["path"].startswith("/v1/messages")}
    assert models == {resolve_model("sonnet")}  # --model over every settings file


def test_bad_settings_flag_stops_the_run(cli: Cli, repo: Path) -> None:
    proc = cli("-p", "go", "--settings", '{"model": ', cwd=repo)
    assert proc.returncode == 1
    assert (
        proc.stderr.strip()
        == "agentteams: error: invalid JSON given to --settings (line 1, column 11: Expecting value)"
    )


def test_config_shows_each_value_and_its_file(cli: Cli, repo: Path, config_root: Path) -> None:
    proc = cli("config", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    where = {v["key"]: (v["scope"], v["file"]) for v in out["values"]}
    assert where["model"] == ("local", str(repo / ".claude" / "settings.local.json"))
    assert where["permissions.allow[0]"] == ("user", str(config_root / "settings.json"))
    assert where["permissions.allow[1]"][0] == "project" and where["env.SETTINGS_MARK"][0] == "user"
    assert out["settings"]["model"] == "haiku" and out["problems"] == []
    text = cli("config", cwd=repo).stdout
    assert f'model                 "haiku"  (local: {repo / ".claude" / "settings.local.json"})' in text


def test_version_does_not_import_the_settings_code() -> None:
    code = ("import sys; sys.argv = ['agentteams', '--version']\nfrom agentteams import cli\n"
            "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('agentteams.settings')))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
