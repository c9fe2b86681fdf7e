"""A Redis that stops answering (issue 32, item 3): paused (SIGSTOP) past the store's deadline while three teammates
on two nodes work, said in one line per process and never taken for the members' death; one that takes connections
and never answers, and one that is not there: each command bounded by a short deadline, in one line. The 150 s pause
of the issue is scaled down with the store's deadlines (AGENTTEAMS_STORE_TIMEOUT 2 s, AGENTTEAMS_STORE_RETRY 4 s)."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import redis_team as rt
from tests.support.cli import Cli
from tests.support.fault_ledger import FaultLedger
from tests.support.redislab import RedisServer, free_port
from tests.support.team_script import TEAM
from tests.support.wait import wait_until

ENV = {"AGENTTEAMS_STORE_TIMEOUT": "2", "AGENTTEAMS_STORE_RETRY": "4"}
PAUSE = 10.0  # past the deadline (4 s), as 150 s is past the default 120 s: the commands fail, the team goes on
STORE_LINES = ("is not answering", "is unreachable", "has been away", "is back after")


def store_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(s in line for s in STORE_LINES)]


def refused_within(cli: Cli, url: str, bound: float, ledger: FaultLedger, **run: Any) -> list[str]:
    """`task list` on the store at `url` must fail within `bound` s (else a hang in the ledger): its stderr lines."""
    began = time.monotonic()
    listed = cli("--store", url, "task", "list", TEAM, **run)
    took = time.monotonic() - began
    ledger.hangs += int(took > bound)
    assert listed.returncode == 1 and took <= bound, (took, listed.stderr)
    lines: list[str] = listed.stderr.strip().splitlines()
    return lines


def test_a_redis_paused_past_its_deadline_is_said_once_and_kills_no_member(
    cli: Cli, tmp_path: Path, redis_server: RedisServer, ledger: FaultLedger
) -> None:
    store = rt.store_of(redis_server)
    with rt.gated_team(cli, redis_server, tmp_path, ENV) as run:
        team = run.team
        before = rt.claims(store)
        os.kill(redis_server.proc.pid, signal.SIGSTOP)
        ledger.faults += 1
        try:
            stopped = time.monotonic()
            wait_until(lambda: "is not answering" in team.stderr(), 10, "the lead to say the store does not answer",
                       explain=team.stderr)  # fmt: skip
            # a command run meanwhile ends within its deadline, in one line
            assert refused_within(cli, redis_server.url, 8, ledger, env={**cli.env(), **ENV}, timeout=30) == [
                f"agentteams: error: the store at {redis_server.url} did not answer within 2 s (it took the "
                "connection but sent nothing back); set AGENTTEAMS_STORE_TIMEOUT for a slower one"
            ]
            wait_until(lambda: "has been away" in team.stderr(), 15, "the lead to give up waiting on its commands")
            left = PAUSE - (time.monotonic() - stopped)
            if left > 0:
                time.sleep(left)  # the pause itself, past the deadline
        finally:
            os.kill(redis_server.proc.pid, signal.SIGCONT)
        wait_until(lambda: "is back after" in team.stderr(), 15, "the lead to say the store is back")
        wait_until(lambda: sorted(r.name for r in store.nodes.live()) == ["n1", "n2"], 15, "both nodes to beat")
        settle = time.monotonic() + 6  # two node lifetimes and a lead's look: no verdict from the pause
        while time.monotonic() < settle:
            assert rt.members(store) == sorted(["team-lead", *rt.NAMES]), team.stderr()
            assert rt.claims(store) == before, f"a task changed owner after the pause:\n{team.stderr()}"
            time.sleep(0.2)  # sampling the store through a window, not waiting for an event
        run.gate.touch()
        wait_until(team.ended, 120, "the team to finish", explain=team.stderr)
        err, out = team.stderr(), team.out.read_text()
    node_errs = team.node_texts()
    assert team.lead.returncode == 0, err
    assert "LEAD-DONE" in out, out
    done = sorted(run.log.read_text().split())
    ledger.duplicates += len(done) - len(set(done))
    assert {line.split("-by-")[1] for line in done} == set(rt.NAMES), f"each teammate did its own task: {done}"
    # one line each when it stopped answering, when the commands gave up, when it was back: not one per retry
    said = store_lines(err)
    assert [s.split(" (")[0].split(" after")[0].split(" for ")[0] for s in said] == [
        f"agentteams: warning: the store at {redis_server.url} is not answering",
        f"agentteams: warning: the store at {redis_server.url} has been away",
        f"agentteams: warning: the store at {redis_server.url} is back",
    ], err
    assert "going on without it" not in err, f"the outage said again as a write failure:\n{err}"
    for name, text in node_errs.items():
        assert len(text.splitlines()) <= 6, f"node {name} flooded its log:\n{text}"
    assert "stopped unexpectedly" not in err and "Traceback" not in err + "".join(node_errs.values()), err


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP server that takes every connection and never sends a byte."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not done.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    done.set()
    thread.join(timeout=5)
    for conn in [*held, listener]:
        conn.close()


def test_a_redis_that_never_answers_is_one_line_within_the_deadline(
    cli: Cli, silent_server: int, ledger: FaultLedger
) -> None:
    """The default deadline (5 s): a command used to wait 82 s for its error."""
    url = f"redis://127.0.0.1:{silent_server}/0"
    ledger.faults += 1
    assert refused_within(cli, url, 15, ledger, timeout=120) == [
        f"agentteams: error: the store at {url} did not answer within 5 s (it took the connection but sent nothing "
        "back); set AGENTTEAMS_STORE_TIMEOUT for a slower one"
    ]


def test_an_unreachable_redis_is_one_line_at_once(cli: Cli, ledger: FaultLedger) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    ledger.faults += 1
    lines = refused_within(cli, url, 5, ledger, timeout=60)
    assert len(lines) == 1 and lines[0].startswith(f"agentteams: error: cannot reach the store at {url}:"), lines
    assert "Connection refused" in lines[0], lines


def test_a_redis_gone_for_good_mid_team_ends_the_run_within_bounds(
    cli: Cli, tmp_path: Path, redis_server: RedisServer, ledger: FaultLedger
) -> None:
    """Killed and never started again: the lead and its teammates stop waiting once it has been away past
    AGENTTEAMS_STORE_GIVE_UP (600 s by default; 6 s here), each saying so in one line."""
    env = {**ENV, "AGENTTEAMS_STORE_GIVE_UP": "6"}
    with rt.gated_team(cli, redis_server, tmp_path, env) as run:
        team = run.team
        redis_server.stop()
        ledger.faults += 1
        gone = time.monotonic()
        run.gate.touch()  # the teammates finish their commands into a store that is not there
        bound = 4 + 6 + 15  # the commands' deadline, the give-up, and a loaded machine's rounds
        wait_until(team.ended, 2 * bound, "the lead to end once the store has been away past its limit",
                   explain=team.stderr)  # fmt: skip
        took = time.monotonic() - gone
        ledger.hangs += int(took > bound)
        err = team.stderr()
        wait_until(lambda: all(f"{n}: the store at" in "".join(p.read_text() for p in team.node_errs.values())
                               for n in rt.NAMES), bound, "every teammate to stop waiting")  # fmt: skip
    node_errs = team.node_texts()
    assert took <= bound, f"the lead ended {took:.0f} s after the store went"
    assert err.count("has ended here") == 1 and "past the 6 s a team waits for its store" in err, err
    assert len(store_lines(err)) == 2, f"unreachable, then given up on: one line each\n{err}"
    for name, text in node_errs.items():
        assert len(text.splitlines()) <= 8, f"node {name} flooded its log:\n{text}"
    assert "Traceback" not in err + "".join(node_errs.values()), (err, node_errs)
