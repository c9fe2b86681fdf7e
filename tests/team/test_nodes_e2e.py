"""Nodes end to end: `agentteams node` processes with working directories and API keys of their own run the
teammates a real lead (`agentteams -p`) places on them; the team scenario (tasks with dependencies, two teammates,
DMs, shutdown, TeamDelete) runs with one teammate on each node. On the Redis store each "machine" (the lead's and
two nodes') also has a config root of its own: they share nothing but the store URL."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.nodes_lab import NODE_KEYS, Machines, start_node, stop_node
from tests.support.procs import find_process
from tests.support.team_script import TEAM, team_scenario
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

LEAD_KEY = "test-key-lead-0123456789abcdef"


@pytest.mark.parametrize("kind", ["file", "redis"])
def test_two_teammates_on_two_nodes(
    cli: Cli, config_root: Path, tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    """Each "machine" has its own working directory, API key and model endpoint (a scripted server of its own):
    what reaches each server shows who ran where, and that the lead's environment never reached a node."""
    machines = Machines(kind, config_root, tmp_path, request)
    store = machines.store
    work = tmp_path / "lead"
    work.mkdir()
    dirs = {n: tmp_path / f"machine-{n}" for n in NODE_KEYS}
    with MockServer(team_scenario()) as lead_api, MockServer(team_scenario()) as n1_api, \
            MockServer(team_scenario()) as n2_api:  # fmt: skip
        apis = {"n1": n1_api, "n2": n2_api}
        nodes = {n: start_node(cli, machines.env(f"machine-{n}", apis[n], k), n, dirs[n], "--slots", "1",
                               *machines.node_args())
                 for n, k in NODE_KEYS.items()}  # fmt: skip
        wait_until(lambda: [r.name for r in store.nodes.live()] == ["n1", "n2"], 20, "both nodes to register")
        lead = cli("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", cwd=work,
                   env=machines.env("lead", lead_api, LEAD_KEY, lead=True), timeout=120)  # fmt: skip
        wait_until(lambda: all(r.running == [] for r in store.nodes.live()), 10, "the nodes to let their teammates go")
        errs = [stop_node(proc) for proc in nodes.values()]
        routes = {name: {str(r.get("route")).split("-")[0] for r in api.requests}
                  for name, api in (("lead", lead_api), ("n1", n1_api), ("n2", n2_api))}  # fmt: skip
        lead_bodies = json.dumps([r.get("body") for r in lead_api.requests])
    assert lead.returncode == 0, lead.stderr
    assert "LEAD-DONE" in lead.stdout
    # least loaded first: one slot each, so alice went to n1 and bob to n2, each working in its node's directory
    assert routes == {"lead": {"lead"}, "n1": {"alice"}, "n2": {"bob"}}, routes
    # who does which task is the race the scenario leaves open (one may do all three): each did its own where it ran
    logs = {n: (dirs[n] / "work.log").read_text().split() if (dirs[n] / "work.log").exists() else [] for n in NODE_KEYS}
    assert all(line.endswith("-by-alice") for line in logs["n1"]), logs
    assert all(line.endswith("-by-bob") for line in logs["n2"]), logs
    done = sorted(line.split("-")[1] for line in logs["n1"] + logs["n2"])
    assert done == ["1", "2", "3"], f"each task exactly once: {logs}"
    assert not (work / "work.log").exists(), "a teammate worked in the lead's directory"
    assert "completedTaskId" in lead_bodies and ("[to alice]" in lead_bodies or "[to bob]" in lead_bodies)
    assert "name: alice\\nnode: n1\\n" in lead_bodies and "name: bob\\nnode: n2\\n" in lead_bodies  # the Task results
    said = re.findall(r"(?:Cannot delete team|Cleaned up directories|already gone)[^\"]{0,200}", lead_bodies)
    assert not store.teams.exists(TEAM), (
        f"TeamDelete left the team: {said or lead.stdout[-2000:]} {lead.stderr[-2000:]}"
    )
    assert store.nodes.live() == [], "a stopped node unregisters"
    stored = machines.stored()
    for key in (LEAD_KEY, *NODE_KEYS.values()):
        assert key.encode() not in stored + "".join(errs).encode(), "an API key was written to the store or a log"
    if kind == "redis":
        assert not (machines.root("lead") / "teams").exists(), "the lead wrote its team to files, not to Redis"


@pytest.mark.parametrize("kind", ["file", "redis"])
def test_a_node_runs_its_teammates_in_a_tmux_session_of_its_own(
    cli: Cli, config_root: Path, tmp_path: Path, kind: str, request: pytest.FixtureRequest, tmux: Tmux
) -> None:
    """`--teammate-mode tmux`: each teammate a process in a pane of the node's own tmux server (the API key reaches
    it through that server's environment, as the lead's own tmux teammates get theirs)."""
    machines = Machines(kind, config_root, tmp_path, request)
    store = machines.store
    work = tmp_path / "lead"
    work.mkdir()
    with MockServer(team_scenario()) as lead_api, MockServer(team_scenario()) as n1_api:
        mode = ["--teammate-mode", "tmux", "--tmux-socket", str(tmux.sock)]
        node = start_node(cli, machines.env("machine-n1", n1_api, NODE_KEYS["n1"]), "n1", tmp_path / "machine-n1",
                          *mode, *machines.node_args())  # fmt: skip
        wait_until(lambda: store.nodes.read("n1") is not None, 20, "the node to register")
        lead = cli.popen("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", cwd=work,
                         env=machines.env("lead", lead_api, LEAD_KEY, lead=True), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)  # fmt: skip

        def in_panes() -> bool:
            pids = [p.pid for p in tmux.panes().values() if p.pid and not p.dead]
            return all(any(find_process(pid, f"{n}@{TEAM}") for pid in pids) for n in ("alice", "bob"))

        wait_until(in_panes, 60, "alice and bob to run in panes of the node's tmux server")
        out, err = lead.communicate(timeout=120)
        wait_until(lambda: getattr(store.nodes.read("n1"), "running", None) == [], 15, "the node's teammates to end")
        stop_node(node)
        routes = {str(r.get("route")).split("-")[0] for r in n1_api.requests}
    assert lead.returncode == 0, err
    assert "LEAD-DONE" in out
    assert routes == {"alice", "bob"}, routes  # both on the one node: it had the slots
    logs = sorted((tmp_path / "machine-n1" / "work.log").read_text().split())
    assert [line.split("-")[1] for line in logs] == ["1", "2", "3"], logs
    assert not [p for p in tmux.panes().values() if not p.dead], "teammate panes left behind"
