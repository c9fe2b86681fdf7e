"""Interop tier: live mode and model changes sent by our lead to a real `claude` teammate (issue 17, item 4).

Claude Code 2.1.197 obeys `mode_set_request` from its lead: spawned in acceptEdits (a first Write goes ahead
unasked), after our lead's change to plan its next Write asks, our lead (default mode) refuses, and nothing is
written. Claude Code 2.1.330 takes no mode change from its inbox (its log: "permission mode changes are never
accepted from the inbox", and a `mode_set_request` signed with the key it was started with still changes nothing:
the second test), so our lead restarts it at its pause with `--permission-mode plan` and its own session resumed:
the same refusal follows. No version takes a model from its inbox: both are restarted with the new `--model`, their
conversation kept. Offline, never skipped.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from agentteams.backends.tmux import TmuxBackend
from agentteams.mockapi import MockServer
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.protocol import ModeSetRequest
from agentteams.store.signing import Keyring
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.team_script import say, tool, waiting
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

pytestmark = pytest.mark.timeout(150)

TEAM = "livemode"
ME = {"system": "# Agent Teammate Communication", "tools": True}  # a real teammate's main requests
MODEL = "claude-sonnet-4-6"
OTHER_MODEL = "claude-haiku-4-5"  # one both pinned versions know


def alice_routes(target: Path) -> list[dict[str, Any]]:
    write = tool("Write", file_path=str(target), content="written\n")
    first = tool("Write", file_path=str(target.with_name("first.txt")), content="before\n")
    return [
        {"name": "alice-stop", "match": {**ME, "last_prompt": "shutdown_request"},
         "turns": [rc.approve_shutdown_turn(), say("bye")]},
        {"name": "alice-write", "match": {**ME, "last_prompt": "WRITE-NOW"},
         "turns": [write, rc.send_message_turn(LEAD_NAME, "ALICE-WRITE-TRIED", "tried"), say("WRITE-TRIED-IDLE")]},
        {"name": "alice-start", "match": {**ME, "last_prompt": "ALICE-PROMPT"},
         "turns": [first, rc.send_message_turn(LEAD_NAME, "ALICE-READY", "ready"), say("ready")]},
        {"name": "alice-other", "match": ME, "turns": [], "idle": "Noted."},
    ]  # fmt: skip


def lead_scenario(target: Path, version: str) -> dict[str, Any]:
    # 2.1.330 in plan mode runs no SendMessage offline (its auto-mode check is unavailable): its idle notice tells
    tried = "ALICE-WRITE-TRIED" if version == "2.1.197" else "WRITE-TRIED-IDLE"
    lead = [
        tool("TeamCreate", team_name=TEAM, description="live mode"),
        tool("Task", name="alice", team_name=TEAM, description="real claude", prompt="You are alice. ALICE-PROMPT",
             mode="acceptEdits"),
        say("alice is starting."),
        {**tool("SendMessage", to="alice", message={"type": "mode_set_request", "mode": "plan"}),
         "wait_for": ["ALICE-READY", "idle_notification"]},  # her first turn over: nothing of it comes later
        tool("SendMessage", to="alice", message="WRITE-NOW: write the file", summary="write"),
        say("Asked alice to write."),
        {**tool("SendMessage", to="alice", message={"type": "mode_set_request", "mode": "default"}),
         "wait_for": tried},  # out of plan mode again: a 2.1.330 there runs no SendMessage, not even its shutdown reply
        tool("SendMessage", to="alice", message={"type": "model_set_request", "model": OTHER_MODEL}),
        tool("SendMessage", to="alice", message={"type": "shutdown_request", "reason": "done"}),
        waiting("Asked alice to stop."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("Team removed. LIVE-MODE-DONE"),
    ]  # fmt: skip
    return {"routes": [*alice_routes(target), {"name": "lead", "match": {"system": "You lead a team", "tools": True},
                                               "turns": lead, "idle": "Noted."}]}  # fmt: skip


def tool_results(requests: list[dict[str, Any]]) -> str:
    return json.dumps([
        b for r in requests for m in r["body"]["messages"] if isinstance(m.get("content"), list)
        for b in m["content"] if b.get("type") == "tool_result"
    ])  # fmt: skip


def test_our_lead_s_mode_change_reaches_a_real_claude_teammate_as_its_version_allows(
    claude: Path, claude_version: str, cli: Cli, tmux: Tmux, layout: Layout, config_root: Path, tmp_path: Path
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    target = proj / "planned.txt"
    with MockServer(lead_scenario(target, claude_version), log_path=tmp_path / "req.jsonl") as server:
        rc.seed_home(config_root, [proj], claude_version)
        env = rc.claude_env(config_root, server.base_url)
        lead_pane = tmux.start(env, proj, options={"remain-on-exit": "on"})
        rcfile, out, err = tmp_path / "rc.txt", tmp_path / "out.txt", tmp_path / "err.txt"
        lead = cli.line("-p", "go", "--model", MODEL, "--teammate-mode", "tmux", "--teammate-command", str(claude))
        tmux.respawn(lead_pane, f"{lead} > {out} 2> {err}; echo $? > {rcfile}")

        def explain() -> str:
            shots = "\n".join(f"--- pane {p}:\n{tmux.capture(p)}" for p in tmux.panes())
            routes = [(r.get("route"), r.get("turn")) for r in server.arrivals]
            return f"routes: {routes}\nlead stderr: {err.read_text() if err.exists() else ''}\n{shots}"

        wait_until(lambda: rcfile.exists() and rcfile.read_text().strip() != "", 120, "our lead to finish",
                   interval=rc.POLL, explain=explain)  # fmt: skip
        assert rcfile.read_text().strip() == "0", explain()
        assert "LIVE-MODE-DONE" in out.read_text(), explain()
        lead_said = tool_results([r for r in server.requests if r.get("route") == "lead"])
        alice_said = tool_results([r for r in server.requests if r.get("route") == "alice-write"])
        before = json.dumps([r["body"] for r in server.requests if r.get("route") == "alice-start"])
        server_requests = list(server.requests)

    assert target.with_name("first.txt").read_text() == "before\n"  # acceptEdits, as spawned: written unasked
    assert "Plan mode is active" not in before
    if claude_version == "2.1.197":  # it obeys the frame: in plan mode its Write asks, and our lead refuses
        assert "alice's permission mode is now plan, from its next tool call" in lead_said, lead_said
    else:  # it takes a mode only at its start: our lead restarted it in plan mode, its conversation resumed
        assert "alice now has permission mode plan: it was restarted with its conversation" in lead_said, lead_said
        resumed = json.dumps([r["body"]["messages"] for r in server_requests if r.get("route") == "alice-write"])
        assert "ALICE-PROMPT" in resumed and "ALICE-READY" in resumed, "the restart lost alice's conversation"
    # no version takes a model from its inbox: restarted with it, its conversation resumed
    assert f"alice now has model {OTHER_MODEL}: it was restarted with its conversation" in lead_said, lead_said
    stop = [r["body"] for r in server_requests if r.get("route") == "alice-stop"]
    assert stop and all(b["model"] == OTHER_MODEL for b in stop), [b["model"] for b in stop]
    assert "ALICE-PROMPT" in json.dumps(stop[0]["messages"]), "the model change lost alice's conversation"
    assert "Plan mode is active" in alice_said, alice_said
    assert "The team lead denied this request" in alice_said, alice_said
    assert not target.exists(), alice_said


@ccv.only(*ccv.SIGNING)
def test_a_real_2_1_330_teammate_ignores_even_a_signed_mode_set_request(
    claude: Path, claude_version: str, tmux: Tmux, layout: Layout, config_root: Path, tmp_path: Path
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    target = proj / "planned.txt"
    teams, keys = TeamStore(layout), Keyring()
    lead_session = str(uuid.uuid4())
    team = teams.create(TEAM, lead_session_id=lead_session, cwd=str(proj)).name
    teams.add_member(team, NewMember(name="alice", color="blue", model=MODEL, prompt="ALICE-PROMPT", cwd=str(proj),
                                     backend_type="tmux"))  # fmt: skip
    key = keys.new_lead_key(team, "alice")
    lead = Mailbox(layout, seal=keys.seal)  # our lead's signed voice
    lead.send(team, "alice", "You are alice. ALICE-PROMPT", sender=LEAD_NAME)
    with MockServer({"routes": alice_routes(target)}, log_path=tmp_path / "req.jsonl") as server:
        rc.seed_home(config_root, [proj], claude_version)
        env = rc.claude_env(config_root, server.base_url)
        lead_pane = tmux.start(env, proj, ["cat"], session="lead")
        argv = [str(claude), "--agent-id", f"alice@{team}", "--agent-name", "alice", "--team-name", team,
                "--agent-color", "blue", "--parent-session-id", lead_session, "--lead-verify-key", key.argument(),
                "--permission-mode", "acceptEdits", "--model", MODEL]  # fmt: skip
        forwarded = {"CLAUDECODE": "1", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1",
                     "ANTHROPIC_BASE_URL": server.base_url, "CLAUDE_CONFIG_DIR": str(config_root)}  # fmt: skip
        pane = TmuxBackend(str(tmux.sock)).spawn_pane(lead_pane, "alice", "blue", argv, proj, forwarded)
        teams.set_member_fields(team, "alice", tmux_pane_id=pane)

        def routed(name: str) -> list[dict[str, Any]]:
            return [r for r in server.requests if r.get("route") == name]

        def explain() -> str:
            routes = [(r.get("route"), r.get("turn")) for r in server.arrivals]
            return f"routes so far: {routes}\n{tmux.capture(pane)}"

        wait_until(lambda: len(routed("alice-start")) >= 2, 60, "alice's first turn", interval=rc.POLL,
                   explain=explain)  # fmt: skip
        lead.send(team, "alice", ModeSetRequest(mode="plan", sender=LEAD_NAME).to_text(), sender=LEAD_NAME)
        wait_until(lambda: not Mailbox(layout).read_live(team, "alice"), 20, "alice to take the change off her inbox",
                   interval=rc.POLL, explain=explain)  # fmt: skip
        lead.send(team, "alice", "WRITE-NOW: write the file", sender=LEAD_NAME)
        wait_until(lambda: len(routed("alice-write")) >= 3, 60, "alice's Write", interval=rc.POLL, explain=explain)
        seen = json.dumps([r["body"]["messages"] for r in server.requests])
        member = teams.read(team).member("alice")

    assert target.read_text() == "written\n", "2.1.330 took a mode change from its inbox"
    assert "mode_set_request" not in seen, "the frame reached the model"  # dropped, not shown
    assert member is not None and member.mode != "plan"
