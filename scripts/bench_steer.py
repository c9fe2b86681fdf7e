#!/usr/bin/env python
"""Mid-turn delivery: a message sent to a teammate while it is inside a turn of six tool calls, until the model
request that carries it — in tool calls and in ms — for our teammate and for a real Claude Code teammate.

Same world as `bench_team.py`'s delivery cases (a team written by `TeamStore`, the teammate `bench` started by
hand in a tmux pane with a lead's flags; ours through a fork server), against the scripted server. The teammate
is woken with a work message; its route answers with six `Bash sleep 0.2` calls, then a text. Once the turn's 2nd
request has reached the server (its answer is the 2nd call), `t0 = time.time()` and `Mailbox.send("... MARKi")`:
the message lands while the 2nd call runs. The figures: the `ts` of the first request whose newest user message
holds MARKi, minus `t0`, and how many tool calls ran from the send until then (1: it went in at the next tool
result; 5 and "next turn": it waited for the turn to end, as Claude Code's teammates deliver).

Usage: python scripts/bench_steer.py [--rounds N] [--claude-version V] [--json PATH]; `bench_team.py` runs it in
the same run as its other figures. Target, reported and never enforced: ours <= 1 tool call.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_team as bt

from agentteams.mockapi.reqtext import last_user_text
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.teams import NewMember, TeamStore
from tests.support import realclaude as rc

CALLS = 6  # tool calls per work turn
SLEEP = 0.2  # seconds each call takes
TARGET_CALLS = 1
ROUNDS = 5


@dataclass
class Steer:
    kind: bt.Kind
    calls: list[int]  # tool calls run from the send until the request that carried the message
    ms: list[float]  # the send until that request reached the server
    next_turn: list[bool]  # whether it went in only in the turn after


def script(rounds: int) -> dict[str, Any]:
    """Round i's requests all hold WORK<i> (and every earlier round's): the newest round's route comes first."""
    work = [bt.tool("Bash", command=f"sleep {SLEEP}") for _ in range(CALLS)]
    routes = [{"name": f"work{i}", "match": {"tools": True, "any": f"WORK{i}:"}, "turns": [*work, bt.say("done")],
               "idle": "noted"} for i in reversed(range(rounds))]  # fmt: skip
    return {"routes": [*routes, {"name": "warm", "match": {"tools": True}, "turns": ["ready"], "idle": "noted"}]}


def _round(world: bt.Lab, i: int) -> list[dict[str, Any]]:
    return [r for r in world.server.arrivals if r.get("route") == f"work{i}"]


def _carries(i: int, record: dict[str, Any]) -> bool:
    return record.get("route") == f"work{i}" and f"MARK{i}" in last_user_text(record["body"])


def run(kind: bt.Kind, rounds: int, root: Path, version: str) -> Steer:
    with bt.lab(root, script(rounds), version) as world:
        teams, mailbox = TeamStore(world.layout), Mailbox(world.layout)
        session = str(uuid.uuid4())
        team = teams.create(bt.TEAM, lead_session_id=session, cwd=str(world.proj)).name
        teams.add_member(team, NewMember(name=bt.NAME, color="blue", model=bt.MODEL, prompt="bench",
                                         cwd=str(world.proj), backend_type="tmux"))  # fmt: skip
        mailbox.send(team, bt.NAME, "warm-up WARMUP: answer briefly", sender=bt.LEAD)
        bt.start_teammate(kind, world, team, session)
        lead_inbox = mailbox.inbox_path(team, bt.LEAD)
        bt.await_(functools.partial(bt.idle_after, lead_inbox, 1), f"{kind}: the warm-up idle notice")
        result, idle = Steer(kind, [], [], []), 1
        for i in range(rounds):
            mailbox.send(team, bt.NAME, f"work WORK{i}: run the six calls", sender=bt.LEAD)
            bt.await_(lambda: len(_round(world, i)) >= 2, f"{kind}: round {i}'s 2nd request")  # noqa: B023
            since = world.server.request_count
            t0 = time.time()
            mailbox.send(team, bt.NAME, f"change of plan MARK{i}", sender=bt.LEAD)
            hit = bt.first_request(world.server, functools.partial(_carries, i), f"{kind}: the request carrying {i}",
                                   since)  # fmt: skip
            index = [r["ts"] for r in _round(world, i)].index(hit["ts"])  # request j of the turn answers call j+1
            result.ms.append((hit["ts"] - t0) * 1000)
            result.calls.append(min(index, CALLS) - 1)
            result.next_turn.append(index > CALLS)
            idle += 2 if _own_turn(hit) else 1  # the work turn's idle notice, and the message's own turn's
            bt.await_(functools.partial(bt.idle_after, lead_inbox, idle), f"{kind}: round {i} to end")
    return result


def _own_turn(record: dict[str, Any]) -> bool:
    """The message opened a turn of its own (the newest user message is the message, not tool results)."""
    content = record["body"]["messages"][-1]["content"]
    return isinstance(content, str) or not any(b.get("type") == "tool_result" for b in content)


def measure(rounds: int, root: Path, version: str) -> dict[bt.Kind, Steer]:
    return {kind: run(kind, rounds, root / f"steer-{kind}", version) for kind in ("ours", "real")}


def rows(results: dict[bt.Kind, Steer]) -> list[tuple[str, str, str, str]]:
    o, r = results["ours"], results["real"]
    n = len(o.ms)
    met = "MET" if max(o.calls) <= TARGET_CALLS else "MISSED"
    return [
        (f"mid-turn delivery: tool calls until carried (max of {n})", str(max(o.calls)), str(max(r.calls)),
         f"ours <= {TARGET_CALLS}: {met}"),
        ("mid-turn delivery: send -> carrying request, ms (median)", f"{statistics.median(o.ms):.0f}",
         f"{statistics.median(r.ms):.0f}", f"each call {SLEEP * 1000:.0f} ms"),
        ("mid-turn delivery: went in only in the next turn", f"{sum(o.next_turn)}/{n}", f"{sum(r.next_turn)}/{n}", ""),
    ]  # fmt: skip


def print_rows(results: dict[bt.Kind, Steer]) -> None:
    table = rows(results)
    width = max(len(t[0]) for t in table) + 2
    print(f"{'figure':<{width}}{'ours':>8}{'real CC':>10}  note")
    for figure, ours, real, note in table:
        print(f"{figure:<{width}}{ours:>8}{real:>10}  {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--claude-version", choices=rc.VERSIONS, default=rc.DEFAULT)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-steer-") as tmp:
        results = measure(args.rounds, Path(tmp), args.claude_version)
    print_rows(results)
    if args.json:
        args.json.write_text(json.dumps({k: asdict(v) for k, v in results.items()}, indent=2))


if __name__ == "__main__":
    main()
