"""Nodes end to end: `agentteams node` processes with working directories and API keys of their own run the
teammates a real lead (`agentteams -p`) places on them; the team scenario (tasks with dependencies, two teammates,
DMs, shutdown, TeamDelete) runs with one teammate on each node."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from agentteams.mockapi import MockServer
from agentteams.store.files import FileStore
from agentteams.store.paths import Layout
from tests.support.cli import Cli
from tests.support.procs import child_env
from tests.support.team_script import TEAM, team_scenario
from tests.support.wait import wait_until

LEAD_KEY = "test-key-lead-0123456789abcdef"
NODE_KEYS = {"n1": "test-key-node1-0123456789abcdef", "n2": "test-key-node2-0123456789abcdef"}


def base_env(config_root: Path, server: MockServer, key: str) -> dict[str, str]:
    env = child_env(config_root)
    env.update(ANTHROPIC_API_KEY=key, ANTHROPIC_BASE_URL=server.base_url, CLAUDE_CODE_MAX_RETRIES="1")
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    return env


def start_node(cli: Cli, env: dict[str, str], name: str, workdir: Path, *extra: str) -> subprocess.Popen[str]:
    workdir.mkdir(parents=True, exist_ok=True)
    return cli.popen(
        "node", "--name", name, "--workdir", str(workdir), "--heartbeat", "0.25", *extra, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def stop_node(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
    return err


def test_two_teammates_on_two_nodes(cli: Cli, config_root: Path, tmp_path: Path) -> None:
    """Each "machine" has its own working directory, API key and model endpoint (a scripted server of its own):
    what reaches each server shows who ran where, and that the lead's environment never reached a node."""
    store = FileStore(Layout(config_root))
    work = tmp_path / "lead"
    work.mkdir()
    dirs = {n: tmp_path / f"machine-{n}" for n in NODE_KEYS}
    with MockServer(team_scenario()) as lead_api, MockServer(team_scenario()) as n1_api, \
            MockServer(team_scenario()) as n2_api:  # fmt: skip
        apis = {"n1": n1_api, "n2": n2_api}
        nodes = {n: start_node(cli, base_env(config_root, apis[n], k), n, dirs[n], "--slots", "1")
                 for n, k in NODE_KEYS.items()}  # fmt: skip
        wait_until(lambda: [r.name for r in store.nodes.live()] == ["n1", "n2"], 20, "both nodes to register")
        lead = cli("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", cwd=work,
                   env=base_env(config_root, lead_api, LEAD_KEY), timeout=120)  # fmt: skip
        wait_until(lambda: all(r.running == [] for r in store.nodes.live()), 10, "the nodes to let their teammates go")
        errs = [stop_node(proc) for proc in nodes.values()]
        routes = {name: {str(r.get("route")).split("-")[0] for r in api.requests}
                  for name, api in (("lead", lead_api), ("n1", n1_api), ("n2", n2_api))}  # fmt: skip
        lead_bodies = json.dumps([r.get("body") for r in lead_api.requests])
    assert lead.returncode == 0, lead.stderr
    assert "LEAD-DONE" in lead.stdout
    # least loaded first: one slot each, so alice went to n1 and bob to n2, each working in its node's directory
    assert routes == {"lead": {"lead"}, "n1": {"alice"}, "n2": {"bob"}}, routes
    logs = {n: (dirs[n] / "work.log").read_text().split() for n in NODE_KEYS}
    assert logs["n1"] and all(line.endswith("-by-alice") for line in logs["n1"]), logs
    assert logs["n2"] and all(line.endswith("-by-bob") for line in logs["n2"]), logs
    done = sorted(line.split("-")[1] for line in logs["n1"] + logs["n2"])
    assert done == ["1", "2", "3"], f"each task exactly once: {logs}"
    assert not (work / "work.log").exists(), "a teammate worked in the lead's directory"
    assert "completedTaskId" in lead_bodies and ("[to alice]" in lead_bodies or "[to bob]" in lead_bodies)
    assert not store.teams.exists(TEAM), "TeamDelete left the team"
    assert store.nodes.live() == [], "a stopped node unregisters"
    stored = b"".join(p.read_bytes() for p in config_root.rglob("*") if p.is_file())
    for key in (LEAD_KEY, *NODE_KEYS.values()):
        assert key.encode() not in stored + "".join(errs).encode(), "an API key was written to the store or a log"
