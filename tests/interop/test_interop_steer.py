"""Mid-turn delivery across implementations: a real `claude` teammate (bob) messages our teammate (alice) while she is
inside the 2nd of six tool calls; her 3rd model request carries it, after the results, and only then is it read.

Our lead (`agentteams -p`, tmux) starts both through one teammate command that runs `claude` for bob and ours for
alice. Offline, against the scripted server; needs the real CLI (installed offline) and tmux."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import AGENTTEAMS, Cli
from tests.support.procs import processes_with_env
from tests.support.steering import release
from tests.support.team_script import say, shutdown_route, tool
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

pytestmark = pytest.mark.timeout(150)

TEAM = "steer"
STEER = "BOB-STEER the parser moved to src/"
REAL_TEAMMATE_SYSTEM = "# Agent Teammate Communication"  # only a real teammate's system prompt has it


def scenario(gates: Path) -> dict[str, Any]:
    alice = [tool("Bash", command=f"echo call-{i}") for i in range(1, 7)]
    alice[1] = tool("Bash", command=f"cat {gates / 'alice-2'}")
    alice[2] = tool("Bash", command=f"cat {gates / 'alice-3'}")
    bob = [
        tool("Bash", command=f"cat {gates / 'bob'}"),  # held until alice is inside her 2nd call
        rc.send_message_turn("alice", STEER, summary="parser moved"),
        "bob: sent",
        rc.approve_shutdown_turn(),
        "bob: bye",
    ]
    lead = [
        tool("TeamCreate", team_name=TEAM, description="steer interop"),
        tool("Task", name="alice", team_name=TEAM, description="ours", prompt="You are alice. START-alice"),
        tool("Task", name="bob", team_name=TEAM, description="real claude", prompt="You are bob. START-bob"),
        say("Started. LEAD-DONE"),
    ]
    me = "Your name is alice"
    return {"routes": [
        shutdown_route("alice"),
        {"name": "alice", "match": {"system": me}, "turns": [*alice, say("ALICE-DONE")], "idle": "Noted."},
        {"name": "bob", "match": {"system": REAL_TEAMMATE_SYSTEM, "tools": True}, "turns": bob, "idle": "bob idle"},
        {"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def teammate_command(tmp: Path, claude: Path) -> Path:
    """bob (and the version probe) run the real CLI; alice runs ours."""
    script = tmp / "teammate.sh"
    script.write_text(
        "#!/bin/sh\n"
        'case " $* " in *" --agent-name bob "*|*" --version "*) exec "$REAL" "$@";; esac\n'
        'exec "$OURS" "$@"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def alice_mark(layout: Layout) -> bool | None:
    try:
        entries = json.loads(layout.inbox_file(TEAM, "alice").read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    found = [e for e in entries if STEER in e["text"]]
    return bool(found[0].get("read")) if found else None


@ccv.only(*ccv.SIGNING)
def test_a_real_claude_teammates_message_reaches_our_busy_teammate_mid_turn(
    claude: Path, claude_version: str, cli: Cli, tmux: Tmux, layout: Layout, config_root: Path, tmp_path: Path
) -> None:
    proj, gates = tmp_path / "proj", tmp_path / "gates"
    proj.mkdir()
    gates.mkdir()
    for name in ("alice-2", "alice-3", "bob"):
        os.mkfifo(gates / name)
    with MockServer(scenario(gates), log_path=tmp_path / "req.jsonl") as server:
        rc.seed_home(config_root, [proj], claude_version)
        env = {**rc.claude_env(config_root, server.base_url), "REAL": str(claude), "OURS": AGENTTEAMS}
        pane = tmux.start(env, proj, options={"remain-on-exit": "on"})
        rcfile = tmp_path / "rc.txt"
        lead = cli.line("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "tmux",
                        "--teammate-command", str(teammate_command(tmp_path, claude)))  # fmt: skip
        tmux.respawn(pane, f"{lead} > {tmp_path}/out.txt 2> {tmp_path}/err.txt; echo $? > {rcfile}")

        def routed(route: str) -> int:
            return sum(r.get("route") == route for r in server.arrivals)

        wait_until(lambda: routed("alice") >= 2, 60, "alice inside her 2nd call")
        release(gates / "bob")  # bob's model now sends alice the message
        wait_until(lambda: alice_mark(layout) is not None, 60, "bob's message in alice's inbox")
        assert alice_mark(layout) is False and routed("alice") == 2, "unread, and alice still in her 2nd call"
        release(gates / "alice-2")
        release(gates / "alice-3")
        assert alice_mark(layout) is True, "read once the request carrying it was answered"
        wait_until(lambda: rcfile.exists() and rcfile.read_text().strip() != "", 90, "our lead to exit")
        assert rcfile.read_text().strip() == "0", (tmp_path / "err.txt").read_text()
        bodies = [r["body"] for r in server.requests if r.get("route") == "alice"]
    carrying = [i for i, b in enumerate(bodies) if STEER in json.dumps(b["messages"][-1])]
    assert carrying == [2], "the 3rd request of alice's turn carries it"
    last = bodies[2]["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text"], last
    assert last[1]["text"].startswith('<teammate-message teammate_id="bob"'), last[1]
    assert len(bodies) == 7, "one turn: the message did not cost alice a turn"
    # our lead has exited; the real claude teammate whose pane it closed ends within moments, not at once
    server_pid = tmux.server_pid()
    wait_until(lambda: processes_with_env("CLAUDE_CONFIG_DIR", str(config_root), exclude=frozenset({server_pid})) == [],
               15, "every teammate process to be gone")  # fmt: skip
    print(f"\n[interop] alice's 3rd request carried: {last[1]['text'].splitlines()[0]}")
