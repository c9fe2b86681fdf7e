"""A team that outlives its lead: kill -9 the lead of a three-teammate team in tmux, kill one teammate too, then
`agentteams -c` brings the lead back; it adopts the live teammates (restarting each, idle, with its conversation
and a new key: the dead lead's keys died with it), relaunches the dead one with its own conversation, gets the
messages sent to it while it was dead, and the team finishes and is deleted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.file.teams import TeamStore
from agentteams.store.paths import Layout
from agentteams.store.presence import read_presence
from tests.support.cli import Cli
from tests.support.live_team import inside, status_json
from tests.support.procs import pid_alive
from tests.support.team_run import assert_nothing_left, finish, lead_env
from tests.support.team_script import REQUEST_ID, TASK_ID, TEAM, say, tool, waiting
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

NAMES = ("alice", "bob", "carol")
OLD = "OLD-CONVERSATION-MARK"


def survive_scenario(*, held: bool = False) -> dict[str, Any]:
    """`held`: each teammate's first claim never gets its answer (the lead's process, which holds it, dies
    first), so the relaunched teammate does the job."""
    shutdown = [tool("SendMessage", to=n, message={"type": "shutdown_request", "reason": "all done"}) for n in NAMES]
    lead = [
        tool("TeamCreate", team_name=TEAM, description="survive"),
        *[tool("TaskCreate", subject=f"Job {i}", description=f"job {i}") for i in (1, 2, 3)],
        *[tool("Task", name=n, team_name=TEAM, description="worker", prompt=f"You are {n}. START-{n}") for n in NAMES],
        say(f"The team is at work. {OLD}"),
        {**shutdown[0], "wait_for": ["You were resumed", *(f"finished a job: {n}" for n in NAMES)]},
        *shutdown[1:],
        waiting("Waiting for the team to stop."),
        {**tool("TeamDelete"), "wait_for": [f"Teammate {n} shut down" for n in NAMES]},
        say("LEAD-DONE"),
    ]
    routes: list[dict[str, Any]] = []
    for me in NAMES:
        system = f"Your name is {me}"
        claim = [  # held long enough for the lead to be killed while every teammate is mid-turn
            {**tool("Bash", command=f"echo task-{TASK_ID}-by-{me} >> work.log"), "delay_ms": 1500},
            tool("SendMessage", to="team-lead", message=f"finished a job: {me}", summary="job done"),
            say("Job finished."),
        ]  # fmt: skip
        if held:
            claim = [{**say("never sent"), "delay_ms": 60000}, {**claim[0], "delay_ms": 0}, *claim[1:]]
        routes += [
            {"name": f"{me}-shutdown", "match": {"system": system, "last_prompt": "shutdown_request"},
             "turns": [tool("SendMessage", to="team-lead",
                            message={"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True})]},
            {"name": f"{me}-claim", "match": {"system": system, "last_prompt": "You claimed task #"}, "turns": claim},
            {"name": f"{me}-other", "match": {"system": system}, "turns": [], "idle": "Noted."},
        ]  # fmt: skip
    routes.append({"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead,
                   "idle": "Noted."})  # fmt: skip
    return {"routes": routes}


def _arrived(server: MockServer, route: str, text: str = "") -> list[dict[str, Any]]:
    return [r for r in server.arrivals if r.get("route") == route and text in json.dumps(r.get("body"))]


def _mid_turn_with_the_lead_idle(server: MockServer, layout: Layout) -> bool:
    """Every teammate's claim is in, and the lead's turn is over (its last answer, with OLD, is in its transcript):
    teammates quick to start could be at their claims while the lead's answer was still on its way."""
    lead = read_presence(layout, TEAM, "team-lead")
    return all(_arrived(server, f"{n}-claim") for n in NAMES) and lead is not None and lead.state == "idle"


def _alive_again(layout: Layout, name: str, old_pid: int) -> int:
    """The pid of `name`'s new process once its presence record names a live one other than `old_pid`; else 0."""
    record = read_presence(layout, TEAM, name)
    ok = record is not None and record.pid != old_pid and pid_alive(record.pid) and record.state != "exited"
    return record.pid if ok and record is not None else 0


def _lead_line(cli: Cli, tmp: Path, *args: str) -> str:
    flags = ("--dangerously-skip-permissions", "--teammate-mode", "tmux")
    return f"{cli.line('-p', *args, *flags)} > {tmp}/out.txt 2> {tmp}/err.txt; echo $? > {tmp}/rc.txt"


@pytest.mark.parametrize("carol_alone", [False, True], ids=["relaunched-by-the-lead", "resumed-alone-first"])
@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_a_killed_lead_is_resumed_and_takes_its_team_back(
    cli: Cli, config_root: Path, layout: Layout, tmp_path: Path, tmux: Tmux, carol_alone: bool
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    teams = TeamStore(layout)
    with MockServer(survive_scenario()) as server:
        env = {**lead_env(config_root, server), "AGENTTEAMS_HEARTBEAT_SECONDS": "0.5"}
        pane = tmux.start(env, work, options={"remain-on-exit": "on"})
        tmux.respawn(pane, _lead_line(cli, tmp_path, "go"))
        wait_until(lambda: _mid_turn_with_the_lead_idle(server, layout), 60, "every teammate mid-turn, the lead idle")
        lead = read_presence(layout, TEAM, "team-lead")
        assert lead is not None
        os.kill(lead.pid, signal.SIGKILL)
        wait_until(lambda: not pid_alive(lead.pid), 10, "the lead to die")

        # the teammates finish their turns; what they send the lead waits in its inbox
        inbox = layout.inbox_file(TEAM, "team-lead")
        wait_until(lambda: all(f"finished a job: {n}" in inbox.read_text() for n in NAMES), 30, "three reports")
        states = {n: read_presence(layout, TEAM, n) for n in NAMES}
        wait_until(lambda: all(getattr(read_presence(layout, TEAM, n), "state", "") == "idle" for n in NAMES), 10,
                   "the teammates to go idle")  # fmt: skip
        pids = {n: p.pid for n, p in states.items() if p is not None}
        assert len(pids) == 3
        in_tmux = cli.with_env(inside(tmux, config_root), timeout=30)
        assert status_json(in_tmux, TEAM)["lead_gone"] is True
        assert "lead gone" in in_tmux("status", TEAM).stdout
        carol = teams.read(TEAM).member("carol")
        assert carol is not None and carol.session_id and carol.cwd and carol.model and carol.mode
        os.kill(pids["carol"], signal.SIGKILL)
        wait_until(lambda: not pid_alive(pids["carol"]), 10, "carol to die")
        assert pid_alive(pids["alice"]) and pid_alive(pids["bob"]), "a teammate stopped with its lead"
        if carol_alone:  # `agentteams resume TEAM carol`: she comes back alone and waits for the lead too
            said = in_tmux("resume", TEAM, "carol")
            assert said.returncode == 0 and "with its own conversation" in said.stdout, said.stderr
            wait_until(lambda: bool(_alive_again(layout, "carol", pids["carol"])), 30, "carol to run again")
            pids["carol-again"] = _alive_again(layout, "carol", pids["carol"])

        (tmp_path / "rc.txt").unlink()  # the killed lead's 137
        started = time.monotonic()
        tmux.respawn(pane, _lead_line(cli, tmp_path, "-c", "carry on"))
        wait_until(lambda: bool(_arrived(server, "lead", "You were resumed")), 30, "the resumed lead's first request",
                   interval=0.01)  # fmt: skip
        took = time.monotonic() - started
        wait_until(lambda: all(_arrived(server, f"{n}-shutdown") for n in NAMES), 60, "the shutdown requests")
        # os.walk, not rglob: the running team's lock dirs come and go under the walk (rglob raises on one gone)
        keys_written = [f"{d}/{f}" for d, _, files in os.walk(config_root) for f in files
                        if "key" in f and not _peer_token_file(Path(d, f))]  # fmt: skip
        run = finish(tmp_path / "rc.txt", tmp_path, server, timeout=90)
        bodies = [r["body"] for r in server.requests]
        routes = [r.get("route") for r in server.requests]

    assert run.rc == 0, run.err
    assert "LEAD-DONE" in run.out
    print(f"lead resume → its first model request: {took * 1000:.0f} ms")
    # the target is 3 s, judged by scripts/bench_resume.py (cold 2.4 s, warm 0.34 s; 1.5 s of a cold one is the
    # SDK's import); here only a bound a 2-core machine shared with other test runs keeps (5.5 s seen under load)
    assert took < 8.0, f"the resumed lead took {took:.2f} s to its first request"
    first = json.dumps(next(b for b in bodies if "You were resumed" in json.dumps(b)))
    assert OLD in first, "the resumed lead's request lacks its old conversation"
    if carol_alone:
        assert "verify your messages again: alice, bob, carol." in first and "own conversations" not in first
    else:
        assert "verify your messages again: alice, bob." in first and "own conversations: carol." in first
    assert not any(pid_alive(p) for p in pids.values()), "an old teammate process outlived its restart"
    assert not keys_written, f"a signing key was written down: {keys_written}"
    lead_seen = json.dumps([b for b, r in zip(bodies, routes, strict=True) if r == "lead"])
    for n in NAMES:
        assert f"finished a job: {n}" in lead_seen, f"{n}'s message to the dead lead was never delivered"
        assert f"{n}-shutdown" in routes
    for n in NAMES:  # each approved a signed shutdown request: each checked the new lead's key
        back = json.dumps(next(b for b, r in zip(bodies, routes, strict=True) if r == f"{n}-shutdown"))
        assert f"START-{n}" in back and "You claimed task #" in back, f"{n} came back without its past"
    log = sorted((work / "work.log").read_text().split())
    assert [line.split("-")[1] for line in log] == ["1", "2", "3"], f"a task was lost: {log}"
    assert_nothing_left(layout, config_root, tmux)


@pytest.mark.parametrize("how", ["-c", "resume TEAM"])
def test_a_killed_in_process_lead_is_resumed_and_restarts_its_teammates(
    cli: Cli, config_root: Path, layout: Layout, tmp_path: Path, how: str
) -> None:
    """The lead's process held its teammates: `-c` in its directory (or `agentteams resume TEAM` from another one)
    relaunches all three with their own conversations and their unfinished tasks open again; the team then
    finishes and TeamDelete leaves nothing."""
    work = tmp_path / "work"
    work.mkdir()
    flags = ("--dangerously-skip-permissions", "--teammate-mode", "in-process")
    with MockServer(survive_scenario(held=True)) as server:
        env = lead_env(config_root, server)
        lead = cli.popen("-p", "go", *flags, env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: _mid_turn_with_the_lead_idle(server, layout), 60, "every teammate mid-turn, the lead idle")
        lead.kill()
        lead.wait(10)
        if how == "-c":
            proc = cli("-p", "-c", "carry on", *flags, env=env, cwd=work, timeout=90)
        else:
            proc = cli("resume", TEAM, "-p", "carry on", *flags, env=env, cwd=tmp_path, timeout=90)
        bodies = [r["body"] for r in server.requests]
        routes = [r.get("route") for r in server.requests]
    assert proc.returncode == 0, proc.stderr
    assert "LEAD-DONE" in proc.stdout
    first = json.dumps(next(b for b in bodies if "You were resumed" in json.dumps(b)))
    assert OLD in first and "own conversations: alice, bob, carol." in first
    assert "pending again: #1, #2, #3" in first or "pending again" in first
    for n in NAMES:
        back = json.dumps(next(b for b, r in zip(bodies, routes, strict=True) if r == f"{n}-shutdown"))
        assert f"START-{n}" in back, f"{n} came back without its conversation"
    log = sorted((work / "work.log").read_text().split())
    assert [line.split("-")[1] for line in log] == ["1", "2", "3"], f"a task was lost: {log}"
    assert_nothing_left(layout, config_root)


def _peer_token_file(path: Path) -> bool:
    """claude's messaging token file (`sessions/<pid>.<sha256>.key`: a session's token for others to show its socket,
    written by claude's sessions and ours alike): no signing key."""
    try:
        return path.parent.name == "sessions" and set(json.loads(path.read_text())) == {"peerToken", "procStart",
                                                                                         "pidDomain"}  # fmt: skip
    except (OSError, ValueError, TypeError):
        return False
