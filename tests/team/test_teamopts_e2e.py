"""Per-teammate options and live changes end to end (issue 17, items 3 and 4): our lead in a private tmux server
spawns bob in a second repository with `disallowed_tools: ["Bash(rm:*)"]`; bob works under that repository's
CLAUDE.md and settings; his model's `rm` is refused at execution (the lead and bob bypass permissions: only the rule
stops it); a model change sent by the lead shows in bob's next request with his conversation kept; `agentteams set
--mode plan`, run from a shell and routed through the running lead, makes bob's next Write refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.teams import TeamStore
from agentteams.store.paths import Layout
from tests.support.cli import Cli
from tests.support.team_run import finish, lead_env, lead_in_tmux
from tests.support.team_script import TEAM, say, shutdown_route, tool, waiting
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

BOB = "Your name is bob"


def scenario(repo2: Path) -> dict[str, Any]:
    lead = [
        tool("TeamCreate", team_name=TEAM, description="options"),
        tool("Task", name="bob", team_name=TEAM, description="worker", prompt="You are bob. START-bob",
             cwd=str(repo2), disallowed_tools=["Bash(rm:*)"]),
        say("Started."),
        {**tool("SendMessage", to="bob", message={"type": "model_set_request", "model": "haiku"}),
         "wait_for": "BOB-RM-TRIED"},
        tool("SendMessage", to="bob", message="MODEL-NOW: say hello", summary="hello"),
        # a turn held while the test changes bob's mode and asks for the write: a -p lead whose team sat idle for a
        # second would end the run (and its team) meanwhile
        {**say("Asked bob."), "delay_ms": 8000},
        {**tool("SendMessage", to="bob", message={"type": "shutdown_request", "reason": "done"}),
         "wait_for": "BOB-WRITE-TRIED"},
        waiting("Stopping bob."),
        {**tool("TeamDelete"), "wait_for": "Teammate bob shut down"},
        say("Team removed. LEAD-DONE"),
    ]  # fmt: skip
    return {"routes": [
        shutdown_route("bob"),
        {"name": "bob-start", "match": {"system": BOB, "last_prompt": "START-bob"},
         "turns": [tool("Bash", command="rm victim.txt"), tool("Bash", command="touch made.txt"),
                   to_lead("BOB-RM-TRIED"), say("tried")]},
        {"name": "bob-model", "match": {"system": BOB, "last_prompt": "MODEL-NOW"},
         "turns": [to_lead("BOB-ON-NEW-MODEL"), say("hello")]},
        {"name": "bob-write", "match": {"system": BOB, "last_prompt": "WRITE-NOW"},
         "turns": [tool("Write", file_path="planned.txt", content="x"), to_lead("BOB-WRITE-TRIED"), say("tried")]},
        {"name": "bob-other", "match": {"system": BOB}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def to_lead(text: str) -> dict[str, Any]:
    return tool("SendMessage", to="team-lead", message=text, summary=text)


def results(requests: list[dict[str, Any]]) -> str:
    """Every tool result the requests carried, as one JSON text."""
    out = [
        b for r in requests for m in r["body"]["messages"] if isinstance(m.get("content"), list)
        for b in m["content"] if b.get("type") == "tool_result"
    ]  # fmt: skip
    return json.dumps(out)


def test_a_teammate_in_another_repository_with_its_rules_then_changed_live(
    cli: Cli, config_root: Path, layout: Layout, work: Path, tmp_path: Path, tmux: Tmux
) -> None:
    (work / "CLAUDE.md").write_text("LEAD-REPO-MEMORY\n")
    repo2 = tmp_path / "repo2"
    (repo2 / ".claude").mkdir(parents=True)
    (repo2 / "CLAUDE.md").write_text("REPO2-MEMORY-MARK: this repository builds the parser.\n")
    (repo2 / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(touch:*)"]}}))
    (repo2 / "victim.txt").write_text("keep me\n")
    with MockServer(scenario(repo2)) as server:
        _pane, rc = lead_in_tmux(tmux, cli, lead_env(config_root, server), work, tmp_path, "--teammate-mode", "tmux")

        def served(route: str) -> list[dict[str, Any]]:
            return [r for r in server.requests if r.get("route") == route]

        wait_until(lambda: len(served("bob-model")) >= 2, 60, "bob's turn on the new model")
        member = TeamStore(layout).read(TEAM).member("bob")
        assert member is not None
        done = cli("set", TEAM, "bob", "--mode", "plan", env=lead_env(config_root, server), timeout=30)
        assert done.returncode == 0, done.stderr
        assert "bob's permission mode is now plan" in done.stdout
        assert TeamStore(layout).read(TEAM).member("bob").mode == "plan"  # type: ignore[union-attr]
        Mailbox(layout).send(TEAM, "bob", "WRITE-NOW: write planned.txt", sender="tester")
        run = finish(rc, tmp_path, server, timeout=90)
        bob = [r for r in server.requests if str(r.get("route") or "").startswith("bob")]

    assert run.rc == 0, run.err
    assert "LEAD-DONE" in run.out
    assert not (layout.teams_dir / TEAM).exists(), "TeamDelete left the team (and its change queue) behind"
    # spawned in repo2: recorded, and its memory (not the lead's) in bob's requests
    assert member.cwd == str(repo2.resolve()) and member.disallowed_tools == ["Bash(rm:*)"], member
    first = json.dumps(bob[0]["body"])
    assert "REPO2-MEMORY-MARK" in first and "LEAD-REPO-MEMORY" not in first
    # rm refused at execution by the spawn rule, touch by repo2's own settings; both files as they were
    assert (repo2 / "victim.txt").read_text() == "keep me\n"
    assert not (repo2 / "made.txt").exists()
    said = results(served("bob-start"))
    assert "Bash(rm:*)" in said and "Bash(touch:*)" in said, said
    # the model change: bob's next request names it, and carries his earlier conversation
    starts = [r for r in bob if r.get("route") == "bob-start"]
    after = [r for r in bob if r.get("route") == "bob-model"]
    assert {r["body"]["model"] for r in starts} != {"claude-haiku-5-5"}
    assert all(r["body"]["model"] == "claude-haiku-5-5" for r in after), [r["body"]["model"] for r in after]
    assert "START-bob" in json.dumps(after[0]["body"]["messages"])
    # the mode change: the Write refused for plan mode, nothing written
    assert not (repo2 / "planned.txt").exists()
    assert "plan mode" in results(served("bob-write")), results(served("bob-write"))
