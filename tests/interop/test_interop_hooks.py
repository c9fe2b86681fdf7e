"""Interop tier, hooks: the real Claude Code CLI and ours run the same project settings' hooks (a real script
logging what it is given) against the same scripted conversation, with the same payload keys; and what the real
CLI as a teammate does at a turn's end (Stop, TaskCompleted for a task in progress, TeammateIdle), which ours does."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from agentteams.backends.tmux import TmuxBackend
from agentteams.mockapi import MockServer
from agentteams.mockapi.reqtext import content_text
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs.atomic_json import now_iso
from agentteams.store.paths import Layout
from agentteams.store.protocol import ShutdownRequest
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.headless import KEY, agentteams
from tests.support.hooks import DOCUMENTED
from tests.support.hookscript import HookLab
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

pytestmark = pytest.mark.timeout(120)

EVENTS = {"PreToolUse": "Bash", "PostToolUse": "Bash", "UserPromptSubmit": "", "Stop": "", "SessionEnd": ""}
# every event here must carry the same keys, but for `effort` (the real CLI's reasoning effort level: agentteams
# has none, and a made-up value would mislead a hook)
NOT_OURS = {"effort"}


def conversation() -> dict[str, Any]:
    turns = [{"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "echo HOOKED"}}]}, "done"]
    return {"routes": [rc.main_route("main", "HOOKMARK", turns)]}


def project(root: Path, lab: HookLab) -> Path:
    proj = root / "proj"
    (proj / ".claude").mkdir(parents=True)
    (proj / ".claude" / "settings.json").write_text(json.dumps({"hooks": lab.settings(EVENTS)}))
    return proj


def keys_by_event(lab: HookLab) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for entry in lab.entries():
        out.setdefault(entry["event"], set()).update(entry["payload"])
    return out


def test_both_clis_give_hooks_the_same_payload_keys(
    claude: Path, claude_version: str, cli: Cli, config_root: Path, tmp_path: Path
) -> None:
    theirs_lab, ours_lab = HookLab(tmp_path / "theirs-lab"), HookLab(tmp_path / "ours-lab")
    theirs_proj, ours_proj = project(tmp_path / "theirs", theirs_lab), project(tmp_path / "ours", ours_lab)
    claude_home = tmp_path / "claude-config"
    rc.seed_home(claude_home, [theirs_proj], claude_version)
    with MockServer(conversation()) as server:
        proc = subprocess.run(
            [str(claude), "-p", "HOOKMARK go", "--allowedTools", "Bash"], cwd=theirs_proj,
            env=rc.claude_env(claude_home, server.base_url), capture_output=True, text=True, timeout=90, check=False,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with MockServer(conversation()) as server:
        ours = agentteams(cli, ours_proj, "-p", "HOOKMARK go", "--allowedTools", "Bash", base_url=server.base_url)
    assert ours.returncode == 0, ours.stderr
    theirs_keys, ours_keys = keys_by_event(theirs_lab), keys_by_event(ours_lab)
    assert sorted(theirs_keys) == sorted(EVENTS), f"the real claude ran hooks for {sorted(theirs_keys)}"
    for event, keys in theirs_keys.items():
        assert ours_keys.get(event) == keys - NOT_OURS, f"{event}: ours {ours_keys.get(event)}, theirs {keys}"
    for entry in ours_lab.entries():  # ours go past theirs here: no credential in a hook's environment
        assert KEY not in entry["raw"] and entry["key_vars"] == []
    [theirs_pre], [ours_pre] = theirs_lab.entries("PreToolUse"), ours_lab.entries("PreToolUse")
    assert theirs_pre["payload"]["tool_input"] == ours_pre["payload"]["tool_input"] == {"command": "echo HOOKED"}
    [theirs_post], [ours_post] = theirs_lab.entries("PostToolUse"), ours_lab.entries("PostToolUse")
    theirs_response, ours_response = theirs_post["payload"]["tool_response"], ours_post["payload"]["tool_response"]
    assert sorted(ours_response) == sorted(theirs_response)  # Bash's result as hook scripts read it
    assert ours_response["stdout"].strip() == theirs_response["stdout"].strip() == "HOOKED"


def test_real_claude_teammate_turn_end_hooks(
    claude: Path, claude_version: str, tmux: Tmux, layout: Layout, config_root: Path, tmp_path: Path
) -> None:
    lab = HookLab(tmp_path / "lab")
    proj = tmp_path / "proj"
    (proj / ".claude").mkdir(parents=True)
    hooks = lab.settings({"TeammateIdle": "", "TaskCompleted": "", "Stop": "", "SessionStart": ""})
    (proj / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    script = {"routes": [rc.main_route("alice", "ALICEMARK", [
        rc.send_message_turn("team-lead", "ALICE-REPLY working on it", summary="hello"),
        "alice: paused with the task in progress",
        rc.approve_shutdown_turn(),
        "alice: bye",
    ], idle="alice idle")]}  # fmt: skip
    with MockServer(script) as server:
        rc.seed_home(config_root, [proj], claude_version)
        env = rc.claude_env(config_root, server.base_url)
        teams, mailbox, tasks = TeamStore(layout), Mailbox(layout), TaskStore(layout)
        lead_session = str(uuid.uuid4())
        team = teams.create("hooks team", lead_session_id=lead_session, cwd=str(proj)).name
        teams.add_member(team, NewMember(name="alice", color="blue", model="claude-sonnet-4-6", prompt="ALICEMARK",
                                         cwd=str(proj), backend_type="tmux"))  # fmt: skip
        task = tasks.create(team, "Write report", "REPORT-TASK")
        tasks.update(team, task.id, owner="alice", status="in_progress")
        mailbox.send(team, "alice", "ALICEMARK You are alice. Work on task #1.", sender="team-lead")
        lab.answer(
            {"event": "TaskCompleted", "once": "task", "stderr": "TASK-FEEDBACK: not done", "exit": 2},
            {"event": "TeammateIdle", "once": "idle", "stderr": "IDLE-FEEDBACK: keep going", "exit": 2},
        )
        lead_pane = tmux.start(env, proj, ["cat"], session="lead")
        argv = [str(claude), "--agent-id", f"alice@{team}", "--agent-name", "alice", "--team-name", team,
                "--agent-color", "blue", "--parent-session-id", lead_session, "--dangerously-skip-permissions",
                "--model", "claude-sonnet-4-6"]  # fmt: skip
        forwarded = {"CLAUDECODE": "1", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1",
                     "ANTHROPIC_BASE_URL": server.base_url, "CLAUDE_CONFIG_DIR": str(config_root)}  # fmt: skip
        pane = TmuxBackend(str(tmux.sock)).spawn_pane(lead_pane, "alice", "blue", argv, proj, forwarded)
        teams.set_member_fields(team, "alice", tmux_pane_id=pane)

        def explain() -> str:
            turns = [(r.get("route"), r.get("turn"), content_text(r["body"]["messages"][-1].get("content"))[-120:])
                     for r in server.requests]  # fmt: skip
            events = [e["event"] for e in lab.entries()]
            return f"hooks: {events}\nrequests: {turns}\n{tmux.capture(pane)}"

        wait_until(lambda: len(lab.entries("TeammateIdle")) >= 2, 60, "TeammateIdle twice (blocked, then let go)",
                   interval=rc.POLL, explain=explain)  # fmt: skip
        request = ShutdownRequest(request_id=ShutdownRequest.new_request_id("alice"), sender="team-lead",
                                  timestamp=now_iso())  # fmt: skip
        mailbox.send(team, "alice", request.to_text(), sender="team-lead")
        wait_until(lambda: tmux.exited_ok(pane), 30, "alice to exit", interval=rc.POLL, explain=explain)
        status = tasks.get(team, task.id).status
        bodies = [r["body"] for r in server.requests if r.get("route") == "alice"]
    events = [e["event"] for e in lab.entries()]
    # a turn's end: Stop, then TaskCompleted for the task still in progress (which a pass leaves so), then TeammateIdle
    assert events[:7] == ["SessionStart", "Stop", "TaskCompleted", "TeammateIdle", "Stop", "TaskCompleted",
                          "TeammateIdle"], events  # fmt: skip
    assert status == "in_progress"
    for entry in lab.entries():  # the shapes test_hooks_e2e checks ours against, but for the real CLI's effort
        payload = entry["payload"]
        expected = set(DOCUMENTED[entry["event"]]) | ({"effort"} if entry["event"] == "Stop" else set())
        assert set(payload) == expected, f"{entry['event']}: {sorted(payload)}"
        if entry["event"] in ("TaskCompleted", "TeammateIdle"):
            assert (payload["teammate_name"], payload["team_name"]) == ("alice", team)
    feedback = json.dumps([b["messages"][-1] for b in bodies])
    assert "TaskCompleted hook feedback:" in feedback and "TASK-FEEDBACK: not done" in feedback
    assert "TeammateIdle hook feedback:" in feedback and "IDLE-FEEDBACK: keep going" in feedback
