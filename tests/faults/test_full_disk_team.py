"""A full disk mid-team, freed later (issue 32, item 3): the config root on a 2 MiB tmpfs that a teammate's own command
fills as its turn ends, so its `isActive: false`, its idle presence and its idle notice are refused (ENOSPC). Once the
space is back they are written after all: the lead is woken by the notice, the run ends, no JSON damaged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from tests.faults.disks import small_tmpfs
from tests.support.cli import Cli
from tests.support.fault_ledger import FaultLedger
from tests.support.team_run import finish, lead_env, lead_in_tmux
from tests.support.team_script import REQUEST_ID, TEAM, say, tool, waiting
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

REFUSED = "No space left on device"


def scenario(filler: Path) -> dict[str, Any]:
    """alice does the task, reports it, then fills the disk with her last command: what her turn's end writes fails."""
    fill = f"head -c 8M /dev/zero > {filler} 2>/dev/null; echo filled"
    lead = [
        tool("TeamCreate", team_name=TEAM),
        tool("TaskCreate", subject="The job", description="do it"),
        tool("Task", name="alice", team_name=TEAM, description="worker", prompt="You are alice. START-alice"),
        waiting("Started."),
        # her idle notice, with the task she completed: the report the full disk held back
        {**tool("SendMessage", to="alice", message={"type": "shutdown_request", "reason": "done"}),
         "wait_for": '\\"completedTaskId\\":\\"1\\"'},
        waiting("Waiting for alice."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("All reported. LEAD-DONE"),
    ]  # fmt: skip
    work = [tool("Bash", command="echo job-done >> work.log"), tool("TaskUpdate", taskId="1", status="completed"),
            tool("Bash", command=fill), say("Task finished.")]  # fmt: skip
    approve = {"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True}
    return {"routes": [
        {"name": "alice-shutdown", "match": {"system": "Your name is alice", "last_prompt": "shutdown_request"},
         "turns": [tool("SendMessage", to="team-lead", message=approve)] * 2},
        {"name": "alice-claim", "match": {"system": "Your name is alice", "last_prompt": "You claimed task #"},
         "turns": work},
        {"name": "alice-other", "match": {"system": "Your name is alice"}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def routes(server: MockServer) -> list[str | None]:
    return [r.get("route") for r in server.requests]


def team_files(layout: Layout) -> str:
    config = layout.teams_dir / TEAM / "config.json"
    inboxes = [layout.teams_dir / TEAM / "inboxes" / f"{who}.json" for who in ("team-lead", "alice")]
    return "\n".join(p.read_text() if p.exists() else f"{p}: none" for p in (config, *inboxes))


def no_damaged_json(root: Path) -> None:
    for path in root.rglob("*.json"):
        json.loads(path.read_bytes())  # raises on a torn or emptied file


def test_a_full_disk_freed_mid_team_ends_with_every_report_delivered(
    cli: Cli, config_root: Path, layout: Layout, work: Path, tmp_path: Path, tmux: Tmux, ledger: FaultLedger
) -> None:
    with small_tmpfs(config_root, 2 * 1024 * 1024):
        filler = config_root / "filler"
        with MockServer(scenario(filler)) as server:
            env = lead_env(config_root, server)
            pane, rc = lead_in_tmux(tmux, cli, env, work, tmp_path, "--teammate-mode", "tmux")
            ledger.faults += 1
            wait_until(lambda: routes(server).count("alice-claim") >= 4, 60, "alice's turn to end on a full disk")
            # her turn's end is refused: the warning her pane shows says so
            [alice] = [p for p in tmux.panes() if p != pane]
            wait_until(lambda: REFUSED in tmux.capture(alice), 20, "alice's writes refused")
            # and the lead's (its presence beat, every 5 s): the disk stays full a while
            wait_until(lambda: REFUSED in (tmp_path / "err.txt").read_text(), 20, "the lead's writes refused")
            no_damaged_json(config_root)
            filler.unlink()  # the space is back
            try:
                run = finish(rc, tmp_path, server, timeout=60)
            except AssertionError as e:
                lead = (tmp_path / "err.txt").read_text()[-3000:]
                raise AssertionError(f"{e}\nalice's pane:\n{tmux.capture(alice)}\nteam: {team_files(layout)}\n"
                                     f"lead's stderr:\n{lead}\nrequests: {routes(server)}") from None  # fmt: skip
        no_damaged_json(config_root)
    assert run.rc == 0, run.err
    assert "LEAD-DONE" in run.out, run.out
    assert (work / "work.log").read_text().split() == ["job-done"]
    ledger.writes += 1
