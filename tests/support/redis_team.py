"""A team on Redis across two nodes for the store's fault tests (issue 32, item 3): a `-p` lead on its own "machine",
three teammates (amy and cal on n1, bob on n2) each holding one task and held at a gate until the test opens it, then
finishing, reporting to the lead and shutting down; what was claimed and queued, read straight from the store."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from agentteams.store.redis.connection import parse_url
from agentteams.store.redis.store import RedisStore
from tests.support.cli import Cli
from tests.support.nodes_lab import NODE_KEYS, base_env
from tests.support.redislab import RedisServer
from tests.support.team_script import REQUEST_ID, TASK_ID, TEAM, say, tool, waiting
from tests.support.wait import wait_until

NAMES = ("amy", "bob", "cal")
LEAD_KEY = "test-key-lead-0123456789abcdef"
SLOTS = {"n1": "2", "n2": "1"}  # least loaded first: amy on n1, bob on n2, cal on n1


def teammate_routes(me: str, gate: Path, log: Path) -> list[dict[str, Any]]:
    system = f"Your name is {me}"
    work = f"until [ -e {gate} ]; do sleep 0.05; done; echo task-{TASK_ID}-by-{me} >> {log}"
    one = [
        tool("Bash", command=work),
        tool("TaskUpdate", taskId=TASK_ID, status="completed"),
        tool("SendMessage", to="team-lead", message=f"finished task #{TASK_ID}", summary="task done"),
        say("Task finished."),
    ]
    approve = {"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True}
    return [
        {"name": f"{me}-shutdown", "match": {"system": system, "last_prompt": "shutdown_request"},
         "turns": [tool("SendMessage", to="team-lead", message=approve)] * 2},
        {"name": f"{me}-claim", "match": {"system": system, "last_prompt": "You claimed task #"}, "turns": one * 3},
        {"name": f"{me}-other", "match": {"system": system}, "turns": [], "idle": "Noted."},
    ]  # fmt: skip


def lead_turns(gone: str | None) -> list[dict[str, Any]]:
    """`gone`: a teammate the test kills (its task done by another), left out of the shutdown."""
    spawn = [tool("Task", name=n, team_name=TEAM, description=f"teammate {n}", prompt=f"You are {n}. START-{n}")
             for n in NAMES]  # fmt: skip
    left = [n for n in NAMES if n != gone]
    shutdown = [tool("SendMessage", to=n, message={"type": "shutdown_request", "reason": "all done"}) for n in left]
    return [
        tool("TeamCreate", team_name=TEAM, description="three on two nodes"),
        *[tool("TaskCreate", subject=f"Part {i}", description=f"part {i} of the job") for i in (1, 2, 3)],
        *spawn,
        say("The team is at work."),
        {**shutdown[0], "wait_for": [f"finished task #{i}" for i in (1, 2, 3)]},
        *shutdown[1:],
        waiting("Waiting for the team to shut down."),
        {**tool("TeamDelete"), "wait_for": [f"Teammate {n} shut down" for n in left]},
        say("All three parts done. LEAD-DONE"),
    ]


def scenario(gate: Path, log: Path, gone: str | None = None) -> dict[str, Any]:
    routes = [r for n in NAMES for r in teammate_routes(n, gate, log)]
    lead = {"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead_turns(gone),
            "idle": "Noted."}  # fmt: skip
    return {"routes": [*routes, lead]}


@dataclass
class NodeTeam:
    """The running lead and nodes; `err` is the lead's stderr file."""

    lead: subprocess.Popen[str]
    nodes: dict[str, subprocess.Popen[str]]
    err: Path
    out: Path
    node_errs: dict[str, Path] = field(default_factory=dict)

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def ended(self) -> bool:
        return self.lead.poll() is not None

    def node_texts(self) -> dict[str, str]:
        """Each node's stderr as it stands."""
        return {n: p.read_text() for n, p in self.node_errs.items()}


@dataclass(frozen=True)
class GatedTeam:
    """A started team held at its gate: touch `gate` to let the teammates finish; `log` is their work log."""

    team: NodeTeam
    gate: Path
    log: Path
    api: MockServer


def store_of(redis: RedisServer) -> RedisStore:
    return RedisStore(parse_url(redis.url))


def claims(store: RedisStore) -> dict[str, str | None]:
    return {t.id: t.owner for t in store.tasks.list_tasks(TEAM) if t.status == "in_progress"}


def members(store: RedisStore) -> list[str]:
    return sorted(m.name for m in store.teams.read(TEAM).members)


def start_team(cli: Cli, redis: RedisServer, api: MockServer, tmp: Path, env: dict[str, str]) -> NodeTeam:
    """Both nodes registered, then the lead started; returns once every teammate holds its task (at the gate)."""
    store = store_of(redis)
    nodes, node_errs = {}, {}
    for name, key in NODE_KEYS.items():
        machine = tmp / f"machine-{name}"
        node_env = {**base_env(machine / "claude", api, key), **env}
        node_env.pop("AGENTTEAMS_STORE", None)
        (machine / "claude").mkdir(parents=True, exist_ok=True)
        node_errs[name] = tmp / f"{name}.err"
        (machine / "work").mkdir(parents=True, exist_ok=True)
        with node_errs[name].open("w") as e:
            nodes[name] = cli.popen("node", "--name", name, "--workdir", str(machine / "work"), "--heartbeat", "0.25",
                                    "--slots", SLOTS[name], "--store", redis.url, env=node_env,
                                    stdout=subprocess.DEVNULL, stderr=e)  # fmt: skip
    wait_until(lambda: sorted(r.name for r in store.nodes.live()) == ["n1", "n2"], 30, "both nodes to register")
    lead_root, work = tmp / "lead" / "claude", tmp / "lead" / "work"
    lead_root.mkdir(parents=True)
    work.mkdir(parents=True)
    lead_env = {**base_env(lead_root, api, LEAD_KEY), "AGENTTEAMS_STORE": redis.url, **env}
    out, err = tmp / "lead.out", tmp / "lead.err"
    with out.open("w") as o, err.open("w") as e:
        lead = cli.popen("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", cwd=work,
                         env=lead_env, stdout=o, stderr=e)  # fmt: skip
    team = NodeTeam(lead, nodes, err, out, node_errs)
    wait_until(lambda: _claimed_all(store) or team.ended(), 90, "every teammate to claim its task",
               explain=team.stderr)  # fmt: skip
    assert not team.ended(), team.stderr()
    return team


def _claimed_all(store: RedisStore) -> bool:
    try:
        return len(claims(store)) == len(NAMES)
    except Exception:  # the team not made yet
        return False


def lead_requests(api: MockServer) -> list[str]:
    import json

    return [json.dumps(r.get("body")) for r in api.requests if r.get("route") == "lead"]


def restart_empty(redis: RedisServer) -> None:
    """SIGKILL the server and start it again without its append-only file: a server that lost everything."""
    import shutil

    redis.proc.kill()
    redis.proc.wait(timeout=10)
    shutil.rmtree(redis.workdir / "appendonlydir", ignore_errors=True)
    redis.kill_and_restart()


def stray_keys(store: RedisStore) -> list[str]:
    """Every key but the nodes' own (records, orders, the node list): what a team left or wrote."""
    keys: list[str] = store.client.keys("*")
    return sorted(k for k in keys if not k.startswith("at:node") and not k.startswith("at:reply:"))


def kill_node(team: NodeTeam, name: str) -> None:
    """SIGKILL a node's process and what it started (its in-process teammates die with it)."""
    import os
    import signal

    from tests.support.procs import process_tree

    for pid in process_tree([team.nodes[name].pid]):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    team.nodes[name].wait(timeout=10)


def freed(store: RedisStore, name: str, task_id: str) -> bool:
    """The teammate is no member any more and its task is pending again."""
    task = store.tasks.get(TEAM, task_id)
    return name not in members(store) and task.status == "pending" and task.owner is None


def stop_nodes(team: NodeTeam) -> None:
    for proc in team.nodes.values():
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=20)


@contextlib.contextmanager
def gated_team(
    cli: Cli, redis: RedisServer, tmp: Path, env: dict[str, str], gone: str | None = None
) -> Iterator[GatedTeam]:
    """The scenario's team started on `redis` against a scripted server of its own, every teammate at the gate
    (`start_team`); its nodes stopped afterwards, while the server still answers."""
    gate, log = tmp / "go", tmp / "work.log"
    with MockServer(scenario(gate, log, gone)) as api:
        team = start_team(cli, redis, api, tmp, env)
        try:
            yield GatedTeam(team, gate, log, api)
        finally:
            stop_nodes(team)
