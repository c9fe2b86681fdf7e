"""Interop tier, lead side: a real interactive `claude` lead in tmux spawning a stand-in teammate program.

Proves the driver (typing into the TUI, CLAUDE_CODE_TEAMMATE_COMMAND) and pins the argv/env a real lead gives.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.standin import STANDIN_REPLY, read_events, write_standin
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[MockServer]:
    script = {"routes": [rc.main_route("lead", "LEADMARKER", [
        {"content": [{"type": "tool_use", "name": "Agent", "input": {
            "description": "stand-in worker", "prompt": "ALICEMARK check the parser", "name": "alice"}}]},
        "lead: spawned",
        {"wait_for": STANDIN_REPLY, **rc.send_message_turn("alice", {"type": "shutdown_request", "reason": "done"})},
        "lead: asked alice to stop",
        {"wait_for": "shutdown_approved", "text": "lead: alice has stopped"},
    ], idle="lead idle")]}  # fmt: skip
    mock = MockServer(script, log_path=tmp_path / "req.jsonl").start()
    yield mock
    mock.stop()


def lead_requests(server: MockServer) -> list[dict[str, Any]]:
    return [r for r in server.requests if r["route"] == "lead"]


def test_real_lead_spawns_the_teammate_command_and_runs_the_exchange(
    claude: Path, claude_version: str, server: MockServer, tmux: Tmux, config_root: Path, tmp_path: Path
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    log = tmp_path / "standin.jsonl"
    command = write_standin(tmp_path / "standin.sh", log)
    rc.seed_home(config_root, [proj], claude_version)
    env = rc.claude_env(config_root, server.base_url, extra={"CLAUDE_CODE_TEAMMATE_COMMAND": str(command)})

    lead = rc.RealLead(tmux, claude, env, proj)
    t_ready = lead.wait_ready()
    wait_until(lambda: lead.status() == "idle", 10, "the lead's sessions/<pid>.json to say idle", interval=rc.POLL)
    wait_until(lambda: rc.lead_team(config_root) is not None, 10, "the lead's session team", interval=rc.POLL)
    team = rc.lead_team(config_root)
    assert team is not None
    config_file = config_root / "teams" / team / "config.json"
    config = rc.read_config(config_file)
    assert config["leadAgentId"] == f"team-lead@{team}" and team == f"session-{config['leadSessionId'][:8]}"
    typed = time.time()
    lead.submit("LEADMARKER go")

    def started() -> dict[str, Any] | None:
        return next((e for e in read_events(log) if e["event"] == "start"), None)

    wait_until(lambda: started() is not None, 30, "the lead to start the teammate command", interval=rc.POLL)
    start = started()
    assert start is not None
    t_spawn = start["t"] - typed
    member = next(m for m in rc.read_config(config_file)["members"] if m["name"] == "alice")
    traits = ccv.TRAITS[claude_version]
    prompt = "ALICEMARK check the parser" if traits.member_prompt else None  # 2.1.332: only in the inbox
    assert (member["color"], member["backendType"], member.get("prompt")) == ("blue", "tmux", prompt)
    model = lead_requests(server)[0]["body"]["model"]
    assert model == traits.default_model  # the lead's own, passed on with --model
    argv = start["argv"]
    key = ccv.lead_key_flags(claude_version, argv, int(typed * 1000), int(start["t"] * 1000))  # 2.1.330: its own
    assert argv == [
        "--agent-id", f"alice@{team}", "--agent-name", "alice", "--team-name", team, "--agent-color", "blue",
        "--parent-session-id", config["leadSessionId"], *key, "--dangerously-skip-permissions", "--model", model,
    ]  # fmt: skip
    child_env = start["env"]
    assert {k: child_env.get(k) for k in ("CLAUDECODE", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS", "CLAUDE_CONFIG_DIR",
                                          "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "TMUX_PANE")} == {
        "CLAUDECODE": "1", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1", "CLAUDE_CONFIG_DIR": str(config_root),
        "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": rc.API_KEY,  # the key: from tmux's env
        "TMUX_PANE": member["tmuxPaneId"],
    }  # fmt: skip
    assert {k: child_env.get(k) for k in traits.empty_env} == dict.fromkeys(traits.empty_env, "")  # 2.1.330: set, ''
    assert Path(start["cwd"]) == proj

    # checked on disk and in tmux, not through the lead's model: an approval that lands while the lead is
    # mid-turn is acted on (member removed, pane killed) but never shown to its model
    def alice_gone() -> bool:
        members = rc.read_config(config_file)["members"]
        return all(m["name"] != "alice" for m in members) and member["tmuxPaneId"] not in tmux.panes()

    wait_until(
        alice_gone, 30, "the lead to remove alice from its team and close her pane", interval=rc.POLL,
        explain=lambda: f"lead screen:\n{lead.screen()}",
    )  # fmt: skip
    t_done = time.time() - typed
    seen = [json.dumps(r["body"]["messages"]) for r in lead_requests(server)]
    assert any(STANDIN_REPLY in s and 'teammate_id=\\"alice\\"' in s for s in seen)
    events = read_events(log)
    got = [e["envelope"] for e in events if e["event"] == "got"]
    assert (got[0]["from"], got[0]["text"]) == ("team-lead", "ALICEMARK check the parser")
    assert '"type":"shutdown_request"' in got[-1]["text"]
    # 2.1.330 signs every envelope it writes to the teammate, the prompt and the shutdown_request alike, under the
    # key it gave in argv; 2.1.197 signs nothing
    signed = [ccv.lead_sig_valid(e, key[1]) if key else "lead_sig" in e for e in got]
    assert signed == [traits.signs] * len(got), got
    assert (events[-1]["event"], events[-1]["code"]) == ("exit", 0)

    lead.exit()
    assert not (config_root / "teams" / team).exists()  # the lead deletes its team on exit ...
    assert (config_root / "tasks" / team).is_dir()  # ... and keeps its task list
    first = lead_requests(server)[0]["ts"] - typed
    print(f"\n[interop] lead: TUI ready {t_ready:.2f}s after start; after typing the prompt: first main request "
          f"{first:.2f}s, teammate command started {t_spawn:.2f}s, teammate gone {t_done:.2f}s")  # fmt: skip
