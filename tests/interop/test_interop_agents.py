"""Interop, both ways, for a project's custom agent type (`.claude/agents`): a real `claude` lead spawns our teammate
as one (what it passes, `--agent-type NAME` and the type's model, and writes, `agentType`, is pinned here; ours runs
on the type's prompt, tools, a call outside them refused at execution, and model), and our lead spawns a real
`claude` teammate as one (it runs on the type's prompt, exact tool list and model). Offline, in tmux."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.model.aliases import resolve_model
from agentteams.store.paths import Layout
from agentteams.store.presence import read_presence
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.interop_team import routed, teammate_blocks, user_texts, watch
from tests.support.procs import cmdline, pid_alive
from tests.support.team_script import say, tool, waiting
from tests.support.tmuxlab import Tmux

pytestmark = pytest.mark.timeout(90)

MARK = "CHECKER-PROMPT-INTEROP"
CHECKER = f"""---
name: checker
description: Checks the code, changes nothing.
tools: Read, Grep
model: haiku
---
{MARK}: you check, you never write.
"""


def scenario(victim: Path) -> dict[str, Any]:
    lead = [
        {"content": [{"type": "tool_use", "name": "Agent", "input": {
            "description": "a checker", "prompt": "CHECK-START look at the code", "name": "alice",
            "subagent_type": "checker"}}]},
        "lead: spawned alice",
        {"wait_for": "OURS-TYPED-REPLY", **rc.send_message_turn("alice", {"type": "shutdown_request",
                                                                          "reason": "done"})},
        "lead: asked alice to stop",
    ]  # fmt: skip
    me = {"system": MARK, "tools": True}
    return {"routes": [
        rc.approving_route(me),
        {"name": "alice", "match": me, "idle": "Noted.", "turns": [
            tool("Write", file_path=str(victim), content="x"),
            tool("SendMessage", to="team-lead", message="OURS-TYPED-REPLY checked", summary="checked"),
            say("alice: done")]},
        rc.main_route("lead", "LEADMARKER", lead, idle="lead idle"),
    ]}  # fmt: skip


def test_our_teammate_as_a_custom_type_in_a_real_claude_lead_team(
    claude: Path, claude_version: str, cli: Cli, tmux: Tmux, layout: Layout, config_root: Path, tmp_path: Path
) -> None:
    proj = tmp_path / "proj"
    (proj / ".claude" / "agents").mkdir(parents=True)
    (proj / ".claude" / "agents" / "checker.md").write_text(CHECKER)
    victim = proj / "alice-was-here.txt"
    with MockServer(scenario(victim), log_path=tmp_path / "req.jsonl") as server:
        rc.seed_home(config_root, [proj], claude_version)
        agentteams = cli.argv()[0]
        path = f"{Path(agentteams).parent}{os.pathsep}{os.environ.get('PATH', '/usr/local/bin:/usr/bin:/bin')}"
        env = rc.claude_env(config_root, server.base_url, extra={"CLAUDE_CODE_TEAMMATE_COMMAND": agentteams,
                                                                  "PATH": path})  # fmt: skip
        lead = rc.RealLead(tmux, claude, env, proj)

        def explain() -> str:
            panes = tmux.panes()
            routes = [(r.get("route"), r.get("turn")) for r in server.arrivals]
            return f"routes so far: {routes}\n" + "\n".join(f"--- {p}:\n{tmux.capture(p)}" for p in panes)

        lead.wait_ready()
        watch(lambda: lead.status() == "idle" and rc.lead_team(config_root) is not None, 15, "the lead's team",
              explain)  # fmt: skip
        team = rc.lead_team(config_root)
        assert team is not None
        config_file = config_root / "teams" / team / "config.json"

        def member() -> dict[str, Any] | None:
            return rc.member_of(config_file, "alice")

        lead.submit("LEADMARKER go")
        watch(lambda: read_presence(layout, team, "alice") is not None, 30, "our teammate to start", explain)
        spawned = member()
        presence = read_presence(layout, team, "alice")
        assert spawned is not None and presence is not None
        pid = presence.pid
        argv = cmdline(pid)
        watch(lambda: member() is None, 40, "the real lead to drop alice", explain)
        watch(lambda: not pid_alive(pid), 10, "our teammate's process to end", explain)
        alice, lead_reqs = routed(server, "alice"), routed(server, "lead")
        lead.exit()

    # what a real lead passes and writes for a custom type: the name alone, and the type's model
    assert argv[argv.index("--agent-type") + 1] == "checker", argv
    model = argv[argv.index("--model") + 1]
    assert spawned.get("agentType") == "checker" and spawned.get("model") == model, spawned
    assert "haiku" in model and resolve_model(model) != lead_reqs[0]["body"]["model"]
    print(f"\n[interop] {claude_version} lead's teammate argv: {' '.join(argv[2:])}")
    # our teammate read the type from its own cwd: its prompt, its tools (and the team's), its model
    work = [r["body"] for r in alice if r["route"] == "alice"]
    assert work and all(b["model"] == resolve_model(model) for b in work)  # 2.1.197 passes the alias itself
    assert {t["name"] for t in work[0]["tools"]} == {"Read", "Grep", "SendMessage", "TaskCreate", "TaskGet",
                                                     "TaskList", "TaskUpdate"}  # fmt: skip
    assert any("Write was not run: agent type 'checker'" in t for t in user_texts(alice)), user_texts(alice)
    assert not victim.exists()
    assert any("OURS-TYPED-REPLY" in b for b in teammate_blocks(user_texts(lead_reqs), "alice"))


# -- a real claude teammate of a custom type in our team ------------------------------------------------

TEAM = "typedinterop"
MESSENGER_MARK = "MESSENGER-PROMPT-INTEROP"
# a real teammate is held to `tools` exactly (2.1.330 offers a Read, Grep type only those two: it cannot even
# SendMessage, anthropics/claude-code#81185), so this type lists SendMessage to be able to answer and stop
MESSENGER = f"""---
name: messenger
description: Reads and reports.
tools: Read, Grep, SendMessage
model: haiku
---
{MESSENGER_MARK}: you read and report.
"""


def our_lead_scenario() -> dict[str, Any]:
    lead = [
        tool("TeamCreate", team_name=TEAM, description="a typed real teammate"),
        tool("Task", name="alice", team_name=TEAM, subagent_type="messenger", description="real messenger",
             prompt="CHECK-START look at the code"),
        say("alice is starting."),
        {**tool("SendMessage", to="alice", message={"type": "shutdown_request", "reason": "done"}),
         "wait_for": "REAL-TYPED-REPLY"},
        waiting("Asked alice to stop."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("OUR-TYPED-LEAD-DONE"),
    ]  # fmt: skip
    alice = [rc.send_message_turn("team-lead", "REAL-TYPED-REPLY checked", summary="checked"), "alice: replied",
             rc.approve_shutdown_turn(), "alice: bye"]  # fmt: skip
    return {"routes": [
        {"name": "alice", "match": {"system": MESSENGER_MARK, "tools": True}, "turns": alice, "idle": "alice idle"},
        {"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def test_a_real_claude_teammate_of_a_custom_type_in_our_team(
    claude: Path, claude_version: str, cli: Cli, tmux: Tmux, layout: Layout, config_root: Path, tmp_path: Path
) -> None:
    """Our lead passes what Claude Code's lead passes for a custom type (`--agent-type NAME`, the type's model): a
    real `claude` teammate runs on that type's prompt, tools and model, and answers."""
    proj = tmp_path / "proj"
    (proj / ".claude" / "agents").mkdir(parents=True)
    (proj / ".claude" / "agents" / "messenger.md").write_text(MESSENGER)
    with MockServer(our_lead_scenario(), log_path=tmp_path / "req.jsonl") as server:
        rc.seed_home(config_root, [proj], claude_version)
        env = rc.claude_env(config_root, server.base_url)
        lead_pane = tmux.start(env, proj, options={"remain-on-exit": "on"})
        rcfile, out = tmp_path / "rc.txt", tmp_path / "out.txt"
        lead = cli.line("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "tmux",
                        "--teammate-command", str(claude))  # fmt: skip
        tmux.respawn(lead_pane, f"{lead} > {out} 2> {tmp_path / 'err.txt'}; echo $? > {rcfile}")

        def explain() -> str:
            routes = [(r.get("route"), r.get("turn")) for r in server.arrivals]
            return f"routes so far: {routes}\n" + "\n".join(f"--- {p}:\n{tmux.capture(p)}" for p in tmux.panes())

        def member() -> dict[str, Any] | None:
            return rc.member_of(layout.teams_dir / TEAM / "config.json", "alice")

        watch(lambda: (m := member()) is not None and bool(m.get("tmuxPaneId")), 30, "alice's pane", explain)
        spawned = member()
        assert spawned is not None
        watch(lambda: rcfile.exists() and rcfile.read_text().strip() != "", 60, "our lead to exit", explain)
        assert rcfile.read_text().strip() == "0" and "OUR-TYPED-LEAD-DONE" in out.read_text(), explain()
        alice = routed(server, "alice")
    assert spawned.get("agentType") == "messenger" and spawned.get("model") == resolve_model("haiku"), spawned
    assert alice and all(r["body"]["model"] == resolve_model("haiku") for r in alice)
    offered = {t["name"] for t in alice[0]["body"]["tools"]} - {"DeferredToolPlaceholder"}  # 2.1.330 on haiku 5.5
    assert offered == {"Read", "Grep", "SendMessage"}  # the list, exactly
