"""Interop tier, both ways: the real Claude Code CLI as our lead's teammate, and ours in a real lead's team.

(a) our lead (`agentteams -p`, in tmux, `--teammate-command claude`) spawns a real `claude` teammate;
(b) a real interactive `claude` lead (CLAUDE_CODE_TEAMMATE_COMMAND=agentteams) spawns our teammate.
Offline against our scripted Messages API server. Needs the real CLI (.ci/run installs it) and tmux; never skipped.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.store.presence import read_presence
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.interop_team import (
    ALICE_PROMPT,
    OUR_TEAMMATE_SYSTEM,
    REAL_TEAMMATE_SYSTEM,
    TEAM,
    our_lead_scenario,
    protocol_types,
    routed,
    teammate_blocks,
    unverified,
    user_texts,
    watch,
)
from tests.support.procs import cmdline, find_process, pid_alive, processes_with_env
from tests.support.team_script import say, tool
from tests.support.tmuxlab import Tmux

pytestmark = pytest.mark.timeout(90)


# -- (a) a real claude teammate in our team -------------------------------------------------------------


def test_real_claude_teammate_in_our_team(
    claude: Path,
    claude_version: str,
    cli: Cli,
    tmux: Tmux,
    layout: Layout,
    config_root: Path,
    proj: Path,
    tmp_path: Path,
) -> None:
    """A real `claude` teammate in our team receives its prompt, answers by SendMessage, goes idle, and shuts
    down on request."""
    with MockServer(our_lead_scenario(), log_path=tmp_path / "req.jsonl") as server:
        rc.seed_home(config_root, [proj], claude_version)
        env = rc.claude_env(config_root, server.base_url)  # also our lead's: base URL, key, config root
        lead_pane = tmux.start(env, proj, options={"remain-on-exit": "on"})
        rcfile, out, err = tmp_path / "rc.txt", tmp_path / "out.txt", tmp_path / "err.txt"
        lead = cli.line("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "tmux",
                        "--teammate-command", str(claude))  # fmt: skip
        line = f"{lead} > {out} 2> {err}; echo $? > {rcfile}"
        started, started_ms = time.monotonic(), int(time.time() * 1000)
        tmux.respawn(lead_pane, line)

        def explain() -> str:
            panes = tmux.panes()
            shots = "\n".join(f"--- pane {p} {panes[p]}:\n{tmux.capture(p)}" for p in panes)
            lead_err = err.read_text() if err.exists() else ""
            routes = [(r.get("route"), r.get("turn")) for r in server.arrivals]
            return f"routes so far: {routes}\nlead stderr:\n{lead_err}\n{shots}"

        def alice_pane() -> str | None:
            try:
                config = json.loads((layout.teams_dir / TEAM / "config.json").read_text())
            except (OSError, ValueError):
                return None
            found = [m.get("tmuxPaneId") for m in config.get("members", []) if m.get("name") == "alice"]
            return found[0] if found and found[0] else None

        watch(lambda: alice_pane() is not None, 30, "our lead to spawn alice in a pane", explain)
        pane = alice_pane()
        assert pane is not None
        pane_pid = tmux.panes()[pane].pid
        assert pane_pid is not None
        watch(lambda: find_process(pane_pid, "--agent-name") is not None, 15, "the claude process", explain)
        pid = find_process(pane_pid, "--agent-name")
        assert pid is not None
        argv = cmdline(pid)
        key = ccv.lead_key_flags(claude_version, argv, started_ms, int(time.time() * 1000))
        t_reply = watch(lambda: "alice" in [r.get("route") for r in server.arrivals], 40,
                        "alice's first model request", explain)  # fmt: skip
        watch(rcfile.exists, 50, "our lead to exit", explain)
        t_done = time.monotonic() - started
        watch(lambda: rcfile.read_text().strip() != "", 5, "the shell to write the exit status", explain)
        assert rcfile.read_text().strip() == "0", explain()
        assert "OUR-LEAD-DONE" in out.read_text(), explain()
        watch(lambda: not pid_alive(pid), 10, "alice's claude process to end", explain)
        assert pane not in tmux.panes(), f"alice's pane is left behind: {tmux.panes()}"
        lead_reqs, alice_reqs = routed(server, "lead"), routed(server, "alice")

    # the real CLI was started as a teammate, with Claude Code's own flags
    assert argv[0] == str(claude)
    assert argv[argv.index("--agent-name") + 1] == "alice" and argv[argv.index("--team-name") + 1] == TEAM
    assert "--dangerously-skip-permissions" in argv and "--model" in argv
    # our lead gives 2.1.330 its key where Claude Code's lead does (2.1.197 would exit on the unknown option) ...
    at = argv.index("--parent-session-id") + 2
    assert argv[at : at + len(key)] == key and argv.count("--lead-verify-key") == len(key) // 2, argv
    # ... and signs what it writes to her: her CLI took every message from the lead as genuine, none as forged
    assert unverified(user_texts(alice_reqs)) == [], unverified(user_texts(alice_reqs))
    # alice's model got our prompt, rendered as a message from the lead
    first = user_texts(alice_reqs[:1])
    assert any(ALICE_PROMPT in b for b in teammate_blocks(first, "team-lead")), first
    assert all(REAL_TEAMMATE_SYSTEM not in json.dumps(r["body"].get("system")) for r in lead_reqs)
    scripted = [r["turn"] for r in alice_reqs if r["turn"] is not None]
    assert scripted[:3] == [0, 1, 2], f"alice's scripted turns: {scripted}"  # reply, its follow-up, approval
    # our lead's model saw alice's reply and her idle notice
    from_alice = teammate_blocks(user_texts(lead_reqs), "alice")
    assert any("ALICE-REPLY hello from the real CLI" in b for b in from_alice), from_alice
    assert "idle_notification" in protocol_types(from_alice), from_alice
    assert any("Teammate alice shut down" in t for t in user_texts(lead_reqs))
    # nothing left: team and tasks gone, no process with our config root (but the tmux server itself)
    leftover = sorted(str(p.relative_to(layout.teams_dir)) for p in (layout.teams_dir / TEAM).rglob("*"))
    assert not (layout.teams_dir / TEAM).exists(), f"the team dir is left behind, holding {leftover}"
    assert not layout.task_dir(TEAM).exists(), "the task dir is left behind"
    left = processes_with_env("CLAUDE_CONFIG_DIR", str(config_root), exclude=frozenset({tmux.server_pid()}))
    assert left == [], [(p, cmdline(p)) for p in left]
    print(f"\n[interop] real teammate: first alice request {t_reply:.2f}s, our lead exited {t_done:.2f}s after "
          f"start; alice made {len(alice_reqs)} main request(s), our lead {len(lead_reqs)}")  # fmt: skip


# -- (b) our teammate in a real claude lead's team ------------------------------------------------------

LEAD_PROMPT = "ALICEMARK You are alice. Check the parser and report to the lead."


def real_lead_scenario() -> dict[str, Any]:
    lead = [
        {"content": [{"type": "tool_use", "name": "Agent", "input": {
            "description": "our teammate", "prompt": LEAD_PROMPT, "name": "alice"}}]},
        "lead: spawned alice",
        {"wait_for": "OURS-REPLY-1", **rc.send_message_turn("alice", "LEAD-SECOND: one more check", summary="more")},
        "lead: asked for more",
        {"wait_for": "OURS-REPLY-2", **rc.send_message_turn("alice", {"type": "shutdown_request", "reason": "done"})},
        "lead: asked alice to stop",
    ]  # fmt: skip
    me = {"system": OUR_TEAMMATE_SYSTEM, "tools": True}
    return {"routes": [
        rc.approving_route(me),
        {"name": "alice-second", "match": {**me, "last_prompt": "LEAD-SECOND"},
         "turns": [tool("SendMessage", to="team-lead", message="OURS-REPLY-2 checked again", summary="again"),
                   say("alice: second reply sent")]},
        {"name": "alice-start", "match": {**me, "last_prompt": "ALICEMARK"},
         "turns": [tool("SendMessage", to="team-lead", message="OURS-REPLY-1 parser looks fine", summary="fine"),
                   say("alice: first reply sent")]},
        {"name": "alice-other", "match": me, "turns": [], "idle": "Noted."},
        rc.main_route("lead", "LEADMARKER", lead, idle="lead idle"),
    ]}  # fmt: skip


def log_pane_ends(tmux: Tmux, log: Path) -> None:
    """Global tmux hooks noting how panes end, one line each: `exited %N` when its process exited and the pane
    closed (for a `remain-on-exit failed` pane, as the real lead makes a teammate's: exit status 0), `died %N S`
    when it stays dead with status S. A pane closed by kill-pane fires neither."""
    for hook, line in (("pane-exited", "exited #{hook_pane}"), ("pane-died", "died #{hook_pane} #{pane_dead_status}")):
        tmux.run("set-hook", "-g", hook, f"run-shell {shlex.quote(f'echo {line} >> {shlex.quote(str(log))}')}")


def pane_ends(log: Path, pane: str) -> list[str]:
    try:
        lines = log.read_text().splitlines()
    except FileNotFoundError:
        return []
    return [line for line in lines if line.split()[1:2] == [pane]]


def test_our_teammate_in_a_real_claude_lead_team(
    claude: Path,
    claude_version: str,
    cli: Cli,
    tmux: Tmux,
    layout: Layout,
    config_root: Path,
    proj: Path,
    tmp_path: Path,
) -> None:
    """A real `claude` lead run with CLAUDE_CODE_TEAMMATE_COMMAND=agentteams spawns our teammate: the lead's
    prompt and messages reach it, its replies and idle notices reach the lead's model, and the lead's shutdown
    request makes it approve and exit 0, after which the lead drops the member and the pane is gone."""
    with MockServer(real_lead_scenario(), log_path=tmp_path / "req.jsonl") as server:
        rc.seed_home(config_root, [proj], claude_version)
        agentteams = cli.argv()[0]  # the console script: what CLAUDE_CODE_TEAMMATE_COMMAND names
        path = f"{Path(agentteams).parent}{os.pathsep}{os.environ.get('PATH', '/usr/local/bin:/usr/bin:/bin')}"
        env = rc.claude_env(config_root, server.base_url, extra={"CLAUDE_CODE_TEAMMATE_COMMAND": agentteams,
                                                                  "PATH": path})  # fmt: skip
        lead = rc.RealLead(tmux, claude, env, proj)
        ends = tmp_path / "pane-ends.log"
        log_pane_ends(tmux, ends)
        server_pid = int(tmux.run("display-message", "-p", "#{pid}"))

        def explain() -> str:
            panes = tmux.panes()
            shots = "\n".join(f"--- pane {p} {panes[p]}:\n{tmux.capture(p)}" for p in panes)
            routes = [(r.get("route"), r.get("turn")) for r in server.arrivals]
            team = rc.lead_team(config_root)
            files = ""
            if team is not None:
                for f in sorted((config_root / "teams" / team).rglob("*.json")):
                    files += f"--- {f.relative_to(config_root)}:\n{f.read_text(errors='replace')}\n"
            return f"routes so far: {routes}\n{files}{shots}"

        t_ready = lead.wait_ready()
        watch(lambda: lead.status() == "idle" and rc.lead_team(config_root) is not None, 15,
              "the real lead's session team", explain)  # fmt: skip
        team = rc.lead_team(config_root)
        assert team is not None
        config_file = config_root / "teams" / team / "config.json"
        lead_session = rc.read_config(config_file)["leadSessionId"]

        def member() -> dict[str, Any] | None:
            return rc.member_of(config_file, "alice")

        typed, typed_ms = time.monotonic(), int(time.time() * 1000)
        lead.submit("LEADMARKER go")
        watch(lambda: (m := member()) is not None and bool(m.get("tmuxPaneId")), 30,
              "the real lead to give alice a pane", explain)  # fmt: skip
        spawned = member()
        assert spawned is not None
        pane = str(spawned["tmuxPaneId"])
        watch(lambda: read_presence(layout, team, "alice") is not None, 20, "our teammate to start", explain)
        presence = read_presence(layout, team, "alice")
        assert presence is not None and presence.pane_id == pane
        pid = presence.pid
        argv = cmdline(pid)
        key = ccv.lead_key_flags(claude_version, argv, typed_ms, int(time.time() * 1000))  # 2.1.330: its own
        t_started = time.monotonic() - typed
        # looking at the panes sends tmux a SIGCHLD when one is dead with no status: tmux 3.3a at times misses our
        # exit, and would keep the pane dead (no `exited` hook) until the lead kills it a second later
        watch(lambda: tmux.exited_ok(pane), 40, "alice's pane to close", explain)
        watch(lambda: member() is None and pane not in tmux.panes(), 20, "the real lead to drop alice", explain)
        for hook in ("pane-exited", "pane-died"):  # the lead's own exit must not start a hook shell (it has our env)
            tmux.run("set-hook", "-gu", hook)
        t_gone = time.monotonic() - typed
        watch(lambda: not pid_alive(pid), 10, "our teammate's process to end", explain)
        record = read_presence(layout, team, "alice")  # it says it exited, or is gone: it was not killed hard
        assert record is None or record.state == "exited"
        alice_reqs, lead_reqs = routed(server, "alice"), routed(server, "lead")
        lead.exit()
        assert not (config_root / "teams" / team).exists()  # the real lead deletes its team on exit

    # the real lead started our console script (run by its shebang's python) with Claude Code's teammate flags
    model = lead_reqs[0]["body"]["model"]
    assert argv[1:] == [
        agentteams, "--agent-id", f"alice@{team}", "--agent-name", "alice", "--team-name", team, "--agent-color",
        "blue", "--parent-session-id", lead_session, *key, "--dangerously-skip-permissions", "--model", model,
    ], argv  # fmt: skip
    assert {r["body"]["model"] for r in alice_reqs} == {model}
    # the lead's prompt and its later message reached our teammate's model, as messages from team-lead, and our
    # teammate took every one as genuine (2.1.330 signs them; 2.1.197 gives no key, so none is expected)
    from_lead = teammate_blocks(user_texts(alice_reqs), "team-lead")
    assert unverified(user_texts(alice_reqs)) == [], unverified(user_texts(alice_reqs))
    assert any(LEAD_PROMPT in b for b in from_lead), from_lead
    assert any("LEAD-SECOND" in b for b in from_lead), from_lead
    assert "shutdown_request" in protocol_types(from_lead), from_lead
    names = [r["route"] for r in alice_reqs]
    assert names.count("alice-shutdown") == 1 and names[-1] == "alice-shutdown", names  # approved, then exited
    # our replies and our idle notices reached the real lead's model
    from_alice = teammate_blocks(user_texts(lead_reqs), "alice")
    assert any("OURS-REPLY-1" in b for b in from_alice), from_alice
    assert any("OURS-REPLY-2" in b for b in from_alice), from_alice
    assert "idle_notification" in protocol_types(from_alice), from_alice
    # our process exited 0: its pane closed with it (`exited`), never stayed dead with another status (`died`).
    # The real lead closes the pane once it reads the approval and may come first (it polls every second, our
    # exit takes ~50 ms): then no hook fires, but our teammate ignores that hang-up once done and still exits 0
    how = pane_ends(ends, pane)
    assert not [line for line in how if line.startswith("died")], how
    assert any(line.startswith("exited") for line in how), f"alice's pane was closed before her process ended: {how}"
    # the lead's pane was the server's last: the tmux server (which holds the env too) ends with it
    left = processes_with_env("CLAUDE_CONFIG_DIR", str(config_root), exclude=frozenset({server_pid}))
    assert left == [], [(p, cmdline(p)) for p in left]
    print(f"\n[interop] real lead: TUI ready {t_ready:.2f}s; after the prompt: our teammate up {t_started:.2f}s, "
          f"dropped and its pane closed {t_gone:.2f}s ({', '.join(how)}); our alice made {len(alice_reqs)} "
          f"request(s), the real lead {len(lead_reqs)}")  # fmt: skip
