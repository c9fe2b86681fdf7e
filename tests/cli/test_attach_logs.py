"""`agentteams attach` and `logs` on real teams: a lead and teammates in a private tmux server, the real SDK
against the scripted server."""

from __future__ import annotations

import json
import signal
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.paths import Layout
from agentteams.store.presence import read_presence
from agentteams.store.transcripts.writer import AssistantMeta, Transcript
from tests.support.cli import Cli
from tests.support.live_team import ESC, KEY, LiveTeam
from tests.support.procs import child_env, read_until
from tests.support.team_script import TEAM, team_scenario
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until


@pytest.fixture
def team(live_team: LiveTeam) -> LiveTeam:
    """The running team of tests/support/live_team.py (the shared `live_team` fixture)."""
    return live_team


def _error(team: LiveTeam, *args: str) -> str:
    proc = team.cli(*args)
    assert proc.returncode == 1, proc.stdout
    assert proc.stderr.count("\n") == 1, proc.stderr  # one line
    return proc.stderr.strip()


def test_attach_inside_tmux_selects_and_zooms_the_agent_pane(team: LiveTeam, tmp_path: Path) -> None:
    team.tmux.run("select-pane", "-t", team.lead_pane)
    assert team.tmux.run("display-message", "-p", "-t", "lead:", "#{pane_id} #{window_zoomed_flag}") == (
        f"{team.lead_pane} 0"
    )
    rc = tmp_path / "attach.rc"
    team.tmux.run("new-window", "-d", f"{team.cli.line('attach', TEAM, 'alice')}; echo $? > {rc}")  # TMUX is set
    wait_until(lambda: rc.exists() and rc.read_text().strip() != "", 15, "attach to finish")
    assert rc.read_text().strip() == "0"
    active = team.tmux.run("display-message", "-p", "-t", "lead:", "#{pane_id} #{window_zoomed_flag}")
    assert active == f"{team.alice_pane} 1", "alice's pane must be the active, zoomed pane of the current window"


def test_attach_outside_tmux_attaches_a_client_to_the_agent_pane(team: LiveTeam) -> None:
    """Outside tmux (TMUX unset) attach execs `tmux attach-session`: run it in a terminal (a pane) of its own."""
    sock = team.tmux.sock
    team.tmux.run(
        "new-window",
        "-d",
        f"env -u TMUX -u TMUX_PANE AGENTTEAMS_TMUX_SOCKET={sock} {team.cli.line('attach', TEAM, 'alice')}",
    )

    def client() -> str:
        return team.tmux.run("list-clients", "-F", "#{client_session} #{pane_id}", check=False)

    wait_until(lambda: client() != "", 15, "a tmux client to attach")
    assert client() == f"lead {team.alice_pane}"


def test_attach_refuses_in_process_dead_and_unknown_agents(team: LiveTeam) -> None:
    teams = TeamStore(team.layout)
    teams.add_member(TEAM, NewMember(name="carol", backend_type="in-process"))
    teams.add_member(TEAM, NewMember(name="dave", backend_type="tmux", tmux_pane_id="%99"))
    assert _error(team, "attach", TEAM, "carol") == (
        f"agentteams: error: carol runs inside the lead's process: no pane; use `agentteams logs {TEAM} carol`"
    )
    assert "dave is dead: its pane %99 is gone" in _error(team, "attach", TEAM, "dave")
    assert "no team named 'nope'" in _error(team, "attach", "nope", "alice")
    assert "has no member 'zed' (members: team-lead, alice, carol, dave)" in _error(team, "attach", TEAM, "zed")
    team.kill(team.lead_pid)  # else the lead removes alice as soon as she dies
    team.kill(team.alice_pid)
    assert f"alice is dead: its process {team.alice_pid} has exited" in _error(team, "attach", TEAM, "alice")


def test_logs_of_a_running_teammate_and_follow(team: LiveTeam) -> None:
    proc = team.cli("logs", TEAM, "alice")
    assert proc.returncode == 0, proc.stderr
    assert ESC not in proc.stdout
    for text in ("> <teammate-message", "START-alice", "Noted.", "> You claimed task #1"):
        assert text in proc.stdout, proc.stdout
    presence = read_presence(team.layout, TEAM, "alice")
    assert presence is not None
    config = TeamStore(team.layout).read(TEAM)
    cwd = config.member("alice").cwd  # type: ignore[union-attr]
    assert cwd is not None
    path = team.layout.transcript_file(cwd, presence.session_id)
    follow = team.cli.popen("logs", TEAM, "alice", "-f", stdout=subprocess.PIPE)
    try:
        read_until(follow, "You claimed task #1", 15)
        blocks: list[dict[str, Any]] = [{"type": "text", "text": "FOLLOW-NEW"},
                  {"type": "tool_use", "id": "t9", "name": "Bash", "input": {"command": "make test"}}]  # fmt: skip
        Transcript(path, presence.session_id, cwd=cwd).assistant("alice", blocks, AssistantMeta("msg_9", "m", None, {}))
        out = read_until(follow, "⏺ Bash(make test)", 5)
        assert "FOLLOW-NEW" in out and ESC not in out
        follow.send_signal(signal.SIGINT)
        assert follow.wait(10) == 0
    finally:
        if follow.poll() is None:
            follow.kill()
            follow.wait()


def test_logs_of_finished_teammates_after_the_team_is_gone(
    cli: Cli, tmux: Tmux, config_root: Path, layout: Layout, tmp_path: Path
) -> None:
    """A whole team run to its end (teammates shut down, team deleted); their transcripts are still found."""
    work = tmp_path / "work"
    work.mkdir()
    with MockServer(team_scenario()) as server:
        env = child_env(config_root)
        env.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.base_url, CLAUDE_CODE_MAX_RETRIES="1")
        pane = tmux.start(env, work, options={"remain-on-exit": "on"})
        rc = tmp_path / "rc.txt"
        lead = cli.line("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "tmux")
        tmux.respawn(pane, f"{lead} > {tmp_path}/out.txt 2>&1; echo $? > {rc}")
        wait_until(lambda: rc.exists() and rc.read_text().strip() != "", 90, "the team run to finish")
    assert rc.read_text().strip() == "0", (tmp_path / "out.txt").read_text()
    tmux.kill_server()
    assert not TeamStore(layout).exists(TEAM)
    # who did which task is a free race (each idle teammate claims the lowest open one): one may do all three while
    # the other's first turn still runs, as seen once under CI load; each shows the tasks it did
    worked = [name for name in ("alice", "bob") if f"-by-{name}" in (work / "work.log").read_text()]
    assert worked, "no teammate did a task"
    for name in ("alice", "bob"):
        proc = cli("logs", TEAM, name)
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout
        assert ESC not in out
        did = ("> You claimed task #", "⏺ Bash(echo task-", f"-by-{name} >> work.log)", "⏺ TaskUpdate(")
        for text in (f"You are {name}.", *(did if name in worked else ()), "⏺ SendMessage(", "  ⎿ "):
            assert text in out, f"{text!r} not in the logs of {name}:\n{out}"
        assert "shutdown_request" in out
    logs = cli("logs", TEAM, "lead")
    assert logs.returncode == 0 and "⏺ TeamCreate(" in logs.stdout and "⏺ TeamDelete(" in logs.stdout
    proc = cli("logs", TEAM, "zed")
    assert proc.returncode == 1
    assert proc.stderr.strip() == "agentteams: error: no team named 'proj', and no transcript of 'zed' in it was found"


def test_logs_picks_the_transcript_of_this_team_and_member(cli: Cli, layout: Layout) -> None:
    """A teammate that has exited (no presence file): the first session begun after it joined; an older session
    of the same name, and one that names another team, are not it."""
    cwd = "/srv/project"
    teams = TeamStore(layout)
    teams.create(TEAM, cwd=cwd)
    joined = teams.add_member(TEAM, NewMember(name="alice", cwd=cwd)).joined_at

    def transcript(session: str, text: str, at_ms: int) -> None:
        when = datetime.fromtimestamp(at_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        entry = {"type": "user", "sessionId": session, "timestamp": when, "agent": "alice", "cwd": cwd,
                 "message": {"role": "user", "content": text}}  # fmt: skip
        path = layout.transcript_file(cwd, session)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(entry) + "\n")

    transcript("old", "OLD-SESSION", joined - 60_000)
    transcript("mine", "MINE", joined + 300)
    transcript("later", "LATER-SESSION", joined + 90_000)
    other = Transcript(layout.transcript_file(cwd, "other"), "other", cwd=cwd, team="elsewhere")
    other.prompt("alice", "OTHER-TEAM")
    assert json.loads(layout.transcript_file(cwd, "other").read_text())["team"] == "elsewhere"
    proc = cli("logs", TEAM, "alice")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "> MINE"
    teams.remove_member(TEAM, "alice")  # gone from the team: its newest session since the team began
    assert cli("logs", TEAM, "alice").stdout.strip() == "> LATER-SESSION"
    proc = cli("logs", TEAM, "bob")
    assert proc.returncode == 1
    assert "no transcript of 'bob' in team 'proj' was found; the team has no member 'bob'" in proc.stderr
