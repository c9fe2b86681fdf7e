"""`agentteams status` and `watch` on a real team: a lead and a teammate in a private tmux server, the real SDK
against the scripted server; the teammate is held mid-turn, then killed."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.paths import Layout
from agentteams.store.presence import Presence, write_presence
from tests.support.cli import Cli
from tests.support.live_team import ESC, LiveTeam, members, status_json
from tests.support.procs import child_env, read_until
from tests.support.task_board import write_board
from tests.support.team_script import TEAM
from tests.support.wait import wait_until


@pytest.fixture
def team(live_team: LiveTeam) -> LiveTeam:
    """The running team of tests/support/live_team.py (the shared `live_team` fixture)."""
    return live_team


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_status_reports_members_states_and_tasks_then_a_killed_teammate_as_dead(team: LiveTeam) -> None:
    view = status_json(team.cli, TEAM)
    assert view["name"] == TEAM and view["panes_known"] is True
    who = members(view)
    assert set(who) == {"team-lead", "alice"}
    alice, lead = who["alice"], who["team-lead"]
    assert (alice["state"], alice["role"], alice["color"]) == ("working", "teammate", "blue")
    assert (alice["backend"], alice["pane"], alice["pid"]) == ("tmux", team.alice_pane, team.alice_pid)
    assert alice["current_task"] == "1"
    assert alice["input_tokens"] is not None and alice["cost_usd"] is not None
    assert (lead["role"], lead["pid"]) == ("lead", team.lead_pid) and lead["state"] != "dead"
    lines = [t["line"] for t in view["tasks"]]
    assert lines == ["#1 [in_progress] Long job (alice)", "#2 [pending] Follow-up [blocked by #1]"]
    assert view["tasks"][1]["blocked_by"] == ["1"]
    assert [v["name"] for v in status_json(team.cli)] == [TEAM]  # every team: a list
    plain = team.cli("status")  # piped: plain aligned text
    assert plain.returncode == 0, plain.stderr
    assert ESC not in plain.stdout and f"team {TEAM} — status test" in plain.stdout
    row = next(line for line in plain.stdout.splitlines() if line.split()[:1] == ["alice"])
    assert "working" in row and f"tmux {team.alice_pane}" in row and "#1 Long job" in row
    assert "#2 [pending] Follow-up [blocked by #1]" in plain.stdout

    # The lead would remove a dead teammate at once: kill it first, so the dead teammate stays on the books.
    team.kill(team.lead_pid)
    team.kill(team.alice_pid)
    killed = time.monotonic()
    wait_until(lambda: members(status_json(team.cli, TEAM))["alice"]["state"] == "dead", 5, "alice shown dead")
    took = time.monotonic() - killed
    assert took < 2.0, f"status took {took:.2f} s to show the killed teammate as dead"
    print(f"status showed the killed teammate dead after {took:.3f} s")
    assert members(status_json(team.cli, TEAM))["team-lead"]["state"] == "dead"


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_watch_in_a_pane_shows_a_new_message_within_a_second(team: LiveTeam) -> None:
    pane = team.tmux.run("new-window", "-d", "-P", "-F", "#{pane_id}", team.cli.line("watch", TEAM))
    wait_until(lambda: "messages" in team.tmux.capture(pane) and "alice" in team.tmux.capture(pane), 15, "watch")
    assert "working" in team.tmux.capture(pane)
    sent = time.monotonic()
    Mailbox(team.layout).send(TEAM, "alice", "PING-7 please report", sender="team-lead")
    wait_until(lambda: "team-lead → alice: PING-7 please report" in team.tmux.capture(pane), 5, "the new message")
    took = time.monotonic() - sent
    assert took < 1.0, f"watch took {took:.2f} s to show the message"
    print(f"watch showed the new message after {took:.3f} s")
    team.kill(team.lead_pid)
    team.kill(team.alice_pid)
    wait_until(lambda: "dead" in team.tmux.capture(pane), 3, "watch to show the dead teammate")  # 1 s redraw
    team.tmux.send(pane, "C-c")
    wait_until(lambda: team.tmux.panes()[pane].dead, 5, "watch to exit on Ctrl-C")
    wait_until(lambda: team.tmux.exit_status(pane) is not None, 5, "tmux to reap watch")
    assert team.tmux.exit_status(pane) == 0


def test_watch_piped_prints_new_messages_as_plain_lines(team: LiveTeam) -> None:
    proc = team.cli.popen("watch", TEAM, stdout=subprocess.PIPE)
    try:
        first = read_until(proc, "team-lead → alice: ", 15)  # the team's history so far: the spawn prompt
        Mailbox(team.layout).send(TEAM, "team-lead", "hello lead", sender="alice", summary="progress note")
        out = first + read_until(proc, "alice → team-lead: progress note", 5)
        Mailbox(team.layout).send(TEAM, "alice", json.dumps({"type": "shutdown_request", "requestId": "r1"}),
                                  sender="team-lead")  # fmt: skip
        out += read_until(proc, "team-lead → alice: shutdown request", 5)
        assert ESC not in out
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_status_without_a_tmux_server_trusts_the_process(cli: Cli, layout: Layout, tmp_path: Path) -> None:
    """No tmux server to ask: a pane-backed member whose process runs is alive; one whose process is gone is dead."""
    teams = TeamStore(layout)
    teams.create(TEAM)
    for name in ("alice", "bob", "carol"):
        teams.add_member(TEAM, NewMember(name=name, backend_type="tmux", tmux_pane_id=f"%{len(name)}"))
    teams.set_active(TEAM, "carol", False)  # no presence file: its own isActive says idle
    TaskStore(layout).claim(TEAM, TaskStore(layout).create(TEAM, "Parse").id, "bob")
    sleeper = subprocess.Popen(["sleep", "60"])
    gone = subprocess.Popen(["true"])
    gone.wait()
    try:
        write_presence(layout, TEAM, "alice", Presence(sleeper.pid, "s-a", "tmux", "idle", pane_id="%5",
                                                       context_tokens=50_000, context_window=200_000))  # fmt: skip
        write_presence(layout, TEAM, "bob", Presence(gone.pid, "s-b", "tmux", "working", pane_id="%3"))
        env = child_env(layout.root)
        env["TMUX"] = f"{tmp_path}/no-such-server,1,0"
        view = status_json(cli, TEAM, env=env)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert view["panes_known"] is False
    who = members(view)
    assert (who["alice"]["state"], who["bob"]["state"], who["carol"]["state"]) == ("idle", "dead", "idle")
    assert who["bob"]["current_task"] == "1"  # from the task board: its presence names none
    assert (who["alice"]["context_percent"], who["bob"]["context_percent"]) == (25, None)  # bob's: not recorded
    plain = cli("status", TEAM, env=env).stdout
    assert "no tmux server reachable" in plain and ESC not in plain
    [alice_row] = [line for line in plain.splitlines() if line.strip().startswith("alice")]
    assert " 25% " in alice_row, plain


def test_status_of_a_large_board_sums_it_up_and_lists_every_task_when_asked(cli: Cli, layout: Layout) -> None:
    """2 500 tasks (listed through the task dir's descriptor, each file read once): every one in the JSON view, in id
    order with claude's lines, and each member's current task taken from them; the plain board sums them up (the
    counts, who works, the last completed, the open ones) and lists every one with --all."""
    teams = TeamStore(layout)
    teams.create(TEAM)
    teams.add_member(TEAM, NewMember(name="alice", backend_type="in-process"))
    docs: list[dict[str, Any]] = [
        {"subject": f"step {i}", "status": "completed", "owner": "alice"} for i in range(2400)
    ]
    docs += [{"subject": "now", "status": "in_progress", "owner": "alice"}]
    docs += [{"subject": f"later {i}", "blockedBy": ["2401"] if i % 2 else []} for i in range(99)]
    write_board(layout, TEAM, docs)
    view = status_json(cli, TEAM)
    assert [t["id"] for t in view["tasks"]] == [str(i) for i in range(1, 2501)]
    lines = [t["line"] for t in view["tasks"]]
    assert (lines[0], lines[2400], lines[2402]) == (
        "#1 [completed] step 0 (alice)", "#2401 [in_progress] now (alice)",
        "#2403 [pending] later 1 [blocked by #2401]",
    )  # fmt: skip
    assert members(view)["alice"]["current_task"] == "2401"
    plain = cli("status", TEAM)
    assert plain.returncode == 0, plain.stderr
    out = plain.stdout.splitlines()
    board = out[next(i for i, line in enumerate(out) if line.startswith("tasks")) :]  # after the members
    assert board[:2] == [
        f"tasks: 2500, 2400 completed, 1 in progress, 99 pending; the last 5 completed and the open ones (every "
        f"task: agentteams status {TEAM} --all, or --json)", "  in progress: alice 1",
    ]  # fmt: skip
    assert [line.strip() for line in board[2:]] == [*lines[2395:2400], *lines[2400:]]
    every = cli("status", TEAM, "--all")
    assert [line.strip() for line in every.stdout.splitlines() if line.startswith("  #")] == lines


def test_status_errors_and_empty(cli: Cli) -> None:
    assert status_json(cli) == []
    assert cli("status").stdout.strip() == "no teams"
    proc = cli("status", "nope")
    assert proc.returncode == 1 and proc.stderr.startswith("agentteams: error: no team named 'nope'")
    proc = cli("watch", "nope")
    assert proc.returncode == 1 and "no team named 'nope'" in proc.stderr
