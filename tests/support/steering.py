"""Mid-turn delivery as the steering tests script it: a lead that messages alice while she is inside the 2nd of six
Bash calls, each call held at a named pipe (a gate) until the test releases it, and how many of a route's requests
have arrived at the scripted server."""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from tests.support.team_script import TEAM, say, shutdown_route, tool
from tests.support.wait import wait_until

STEER = "STEER-E2E use the second plan"


def scenario(gates: Path) -> dict[str, Any]:
    bash = [tool("Bash", command=f"echo call-{i}") for i in range(1, 7)]
    bash[1] = tool("Bash", command=f"cat {gates / 'alice-2'}")  # held until the message is in her inbox
    bash[2] = tool("Bash", command=f"cat {gates / 'alice-3'}")  # held until the test has seen the read mark
    lead = [
        tool("TeamCreate", team_name=TEAM, description="steer test"),
        tool("Task", name="alice", team_name=TEAM, description="worker", prompt="You are alice. START-alice"),
        tool("Bash", command=f"cat {gates / 'lead'}"),  # held until alice is inside her 2nd call
        tool("SendMessage", to="alice", message=STEER, summary="change of plan"),
        say("Sent. LEAD-DONE"),
    ]
    me = "Your name is alice"
    return {"routes": [
        shutdown_route("alice"),
        {"name": "alice", "match": {"system": me}, "turns": [*bash, say("ALICE-DONE")], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def release(gate: Path) -> None:
    """Let the Bash call reading `gate` finish, once it has opened it (a writer cannot open a pipe without a reader)."""
    fd: list[int] = []

    def opened() -> bool:
        try:
            fd.append(os.open(gate, os.O_WRONLY | os.O_NONBLOCK))
        except OSError as e:
            if e.errno != errno.ENXIO:
                raise
            return False
        return True

    wait_until(opened, 60, f"a reader at {gate.name}")
    with contextlib.closing(os.fdopen(fd[0], "w")) as f:
        f.write("go\n")


def arrivals_on(server: MockServer, route: str) -> int:
    return sum(r.get("route") == route for r in server.arrivals)
