"""End to end: `agentteams -p` as a real process in a scratch git repository with a Claude Code user's whole setup
(user, project and local settings files, a CLAUDE.md with an @import, a custom agent, a custom command), against the
scripted server: precedence, rules, env, apiKeyHelper; a malformed file; `config`; the custom command starting a run
whose custom agent works as a subagent and as a teammate (issue 12's first acceptance item)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.model.aliases import resolve_model
from tests.support.cli import Cli
from tests.support.headless import result_text, script, tool, tool_results, turns
from tests.support.team_script import REQUEST_ID
from tests.support.team_script import tool as tool_turn

HELPER_KEY = "sk-from-helper-0123456789abcdef"
MEMORY_MARK, IMPORTED_MARK = "PROJECT-MEMORY-E2E", "IMPORTED-MEMORY-E2E"
AGENT_MARK, COMMAND_MARK = "REVIEWER-PROMPT-E2E", "REVIEW-COMMAND-E2E"
COMMAND = f"""---
description: Review a file with a reviewer teammate
argument-hint: [file]
---
{COMMAND_MARK}: review $ARGUMENTS with a reviewer teammate.
"""
REVIEWER = f"""---
name: reviewer
description: Reviews the notes and reports; never changes a file.
tools: Read, Grep, Bash
model: opus
---
{AGENT_MARK}: you review, you never edit.
"""


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
    (d / "CLAUDE.md").write_text(f"{MEMORY_MARK}: keep answers short.\nStyle: @docs/style.md\n")
    (d / "docs").mkdir()
    (d / "docs" / "style.md").write_text(f"{IMPORTED_MARK}: four spaces.\n")
    (d / ".claude" / "agents").mkdir()
    (d / ".claude" / "agents" / "reviewer.md").write_text(REVIEWER)
    (d / ".claude" / "commands").mkdir()
    (d / ".claude" / "commands" / "review.md").write_text(COMMAND)
    return d


def run(cli: Cli, repo: Path, server: MockServer, *args: str, prompt: str = "go") -> subprocess.CompletedProcess[str]:
    env = cli.env()
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "SETTINGS_MARK"):
        env.pop(name, None)  # the key must come from apiKeyHelper
    env.update(ANTHROPIC_BASE_URL=server.base_url, CLAUDE_CODE_MAX_RETRIES="1")
    return cli("-p", prompt, *args, env=env, cwd=repo, timeout=120)


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
    code = ("import atexit, sys; sys.argv = ['agentteams', '--version']\nfrom agentteams import cli\n"
            "atexit.register(lambda: print(sorted(m for m in sys.modules if m.startswith('agentteams.settings'))))\n"
            "cli.main()\n")  # fmt: skip  # main() ends the process: what it imported is told at exit
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def team_script(config_root: Path, repo: Path) -> dict[str, Any]:
    """The lead starts a reviewer subagent, then a reviewer teammate (rita); both try a tool their type leaves out."""
    config = config_root / "teams" / "accteam" / "config.json"
    shutdown = {"type": "shutdown_request", "reason": "done"}
    lead: list[dict[str, Any] | str] = [
        tool("Task", description="review", subagent_type="reviewer", prompt="SUBAGENT-START review notes.txt"),
        tool("TeamCreate", team_name="accteam"),
        tool_turn(
            "Task",
            name="rita",
            team_name="accteam",
            subagent_type="reviewer",
            description="reviewer",
            prompt="START-rita review notes.txt",
        ),
        "Rita is at work.",
        {**tool_turn("Bash", command=f"cat {config}"), "wait_for": "REVIEW-DONE"},  # the project allows cat
        tool("SendMessage", to="rita", message=shutdown),
        "Waiting for rita.",
        {"content": [tool("TeamDelete")], "wait_for": "Teammate rita shut down"},
        "TEAM-DONE",
    ]
    approve = tool("SendMessage", to="team-lead",
                   message={"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True})  # fmt: skip
    rita: list[dict[str, Any] | str] = [
        tool("Write", file_path=str(repo / "rita-was-here.txt"), content="x"),  # not in the reviewer's tools
        tool("Bash", command="echo rita-mark=$SETTINGS_MARK"),
        tool("SendMessage", to="team-lead", message="REVIEW-DONE", summary="review done"),
        "Reviewed.",
    ]
    edit = tool("Edit", file_path=str(repo / "notes.txt"), old_string="keep", new_string="lost")
    sub: list[dict[str, Any] | str] = [edit, "SUB-REVIEW-OK"]
    return {"routes": [
        {"name": "rita-shutdown", "match": {"system": "Your name is rita", "last_prompt": "shutdown_request"},
         "turns": [{"content": [approve]}] * 2},
        {"name": "rita", "match": {"system": "Your name is rita"}, "turns": steps(*rita), "idle": "Noted."},
        {"name": "sub", "match": {"system": AGENT_MARK, "first_user": "SUBAGENT-START"}, "turns": steps(*sub)},
        {"name": "lead", "match": {"system": "You lead a team"}, "turns": steps(*lead), "idle": "Noted."},
    ]}  # fmt: skip


def test_the_whole_setup_and_a_custom_agent_as_subagent_and_teammate(
    cli: Cli, repo: Path, config_root: Path, servers: list[MockServer]
) -> None:
    server = MockServer(team_script(config_root, repo)).start()
    servers.append(server)
    # the lead reads the team config with `cat`: outside the project, so the config root is made a working directory
    extra = json.dumps({"permissions": {"additionalDirectories": [str(config_root)]}})
    proc = run(cli, repo, server, "--teammate-mode", "in-process", "--settings", extra, prompt="/review notes.txt")
    assert proc.returncode == 0, proc.stderr
    assert "TEAM-DONE" in proc.stdout and proc.stderr == ""
    bodies: dict[str, list[dict[str, Any]]] = {}
    for r in server.requests:
        bodies.setdefault(str(r.get("route")), []).append(r["body"])
    lead, sub, rita = bodies["lead"], bodies["sub"], bodies["rita"]
    # the custom command started the run: its body, with the argument, is what the lead was asked
    assert f"{COMMAND_MARK}: review notes.txt with a reviewer teammate." in json.dumps(lead[0]["messages"][0])
    # the teammate and the subagent: the type's prompt in place of ours, its tools only, its model
    for body in (*sub, *rita):
        system = json.dumps(body["system"])
        assert AGENT_MARK in system and "You are agentteams" not in system
        assert body["model"] == resolve_model("opus")
    assert all(b["model"] == resolve_model("haiku") for b in lead)  # the lead on the settings' model
    assert {t["name"] for t in sub[0]["tools"]} == {"Read", "Grep", "Bash"}
    coordination = {"SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate"}  # a teammate keeps these
    assert {t["name"] for t in rita[0]["tools"]} == {"Read", "Grep", "Bash"} | coordination
    # a tool outside the list, sent anyway, is refused at execution: said to the model, and nothing happened
    refusals = [result_text(b) for b in tool_results_of(rita) + tool_results_of(sub) if b.get("is_error")]
    assert any(t.startswith("Write was not run: agent type 'reviewer'") for t in refusals), refusals
    assert any(t.startswith("Edit was not run: agent type 'reviewer'") for t in refusals), refusals
    assert all(str(repo / ".claude" / "agents" / "reviewer.md") in t for t in refusals)
    assert not (repo / "rita-was-here.txt").exists() and (repo / "notes.txt").read_text() == "keep me\n"
    # the settings reach the teammate (env, the user's allow rule) and memory reaches both
    assert any("rita-mark=from-user-settings" in result_text(b) for b in tool_results_of(rita))
    for body in (lead[0], rita[0], sub[0]):
        first = json.dumps(body["messages"][0])
        assert MEMORY_MARK in first and IMPORTED_MARK in first
    # agentType in the team config says which type rita is, as Claude Code writes it
    config_text = next(result_text(b) for b in tool_results_of(lead) if '"members"' in result_text(b))
    rita_member = next(m for m in json.loads(config_text)["members"] if m["name"] == "rita")
    assert rita_member["agentType"] == "reviewer" and rita_member["model"] == resolve_model("opus")
    assert "SUB-REVIEW-OK" in json.dumps(lead)  # the subagent's answer came back to the lead


def steps(*items: dict[str, Any] | str) -> list[dict[str, Any]]:
    """Script turns: a text, a tool_use block, or a whole turn (one with `content`, e.g. a `wait_for`)."""
    return [item if isinstance(item, dict) and "content" in item else turns(item)[0] for item in items]


def tool_results_of(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every tool_result block the agent sent over its requests, each once."""
    seen: dict[str, dict[str, Any]] = {}
    for body in bodies:
        for message in body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result":
                    seen[block["tool_use_id"]] = block
    return list(seen.values())


def test_a_broken_agent_file_is_one_line_and_the_others_still_work(
    cli: Cli, repo: Path, servers: list[MockServer]
) -> None:
    broken = repo / ".claude" / "agents" / "broken.md"
    broken.write_text("---\nname: broken\ndescription: the block is never closed\n")
    server = MockServer(script(tool("Task", description="r", subagent_type="reviewer", prompt="SUB"), "done")).start()
    servers.append(server)
    proc = run(cli, repo, server)
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line == (f"agentteams: warning: custom agent {broken}:1: the front matter block opened by '---' is never "
                    "closed; the file is skipped")  # fmt: skip
    task = server.requests[0]["body"]["tools"]
    enum = next(t for t in task if t["name"] == "Task")["input_schema"]["properties"]["subagent_type"]["enum"]
    assert enum == ["general-purpose", "Explore", "Plan", "reviewer", "fork"]
    # the good file still runs: its subagent's request, which races its caller's next one (the Task call's result
    # comes back at once while the subagent works in the background), so it is found by its prompt, not its place
    assert any(AGENT_MARK in json.dumps(r["body"]["system"]) for r in server.requests[1:]), server.requests
