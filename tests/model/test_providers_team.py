"""A team on Amazon Bedrock: the lead (`agentteams -p` in a tmux pane) has the provider's variables and AWS keys
that the tmux server's environment lacks; its teammate, started in a pane through the fork server, reaches the same
provider: its requests go to Bedrock's route with the mapped model id, SigV4-signed for the lead's region."""

from __future__ import annotations

import shlex
from pathlib import Path

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.procs import child_env
from tests.support.team_script import REQUEST_ID, TEAM, say, tool, waiting
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

SECRET = "aws-secret-team-0123456789SECRET"
HAIKU = "eu.anthropic.claude-haiku-4-5-20251001-v1:0"  # haiku in eu-west-3


def scenario() -> dict[str, object]:
    shutdown = tool("SendMessage", to="alice", message={"type": "shutdown_request", "reason": "done"})
    lead = [
        tool("TeamCreate", team_name=TEAM, description="provider check"),
        tool("Task", name="alice", team_name=TEAM, description="teammate alice", prompt="Say hello. START-alice"),
        say("The team is at work."),
        {**shutdown, "wait_for": "ALICE-HELLO"},
        waiting("Waiting for alice to shut down."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("All done. LEAD-DONE"),
    ]
    answer = {"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True}
    alice = "Your name is alice"
    return {"routes": [
        {"name": "alice-shutdown", "match": {"system": alice, "last_prompt": "shutdown_request"},
         "turns": [tool("SendMessage", to="team-lead", message=answer)] * 2},
        {"name": "alice-hello", "match": {"system": alice, "last_prompt": "START-alice"},
         "turns": [tool("SendMessage", to="team-lead", message="ALICE-HELLO", summary="hello"), say("Said hello.")]},
        {"name": "alice-other", "match": {"system": alice}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def test_a_tmux_teammate_reaches_the_leads_provider(cli: Cli, config_root: Path, tmp_path: Path, tmux: Tmux) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with MockServer(scenario()) as server:
        cleared = ("ANTHROPIC_", "AWS_", "CLAUDE_CODE_USE_", "CLOUD_ML_REGION")
        env = {k: v for k, v in child_env(config_root).items() if not k.startswith(cleared)}
        provider = {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "eu-west-3", "AWS_ACCESS_KEY_ID": "AKIDTEAMEXAMPLE",
                    "AWS_SECRET_ACCESS_KEY": SECRET, "ANTHROPIC_BEDROCK_BASE_URL": server.base_url,
                    "AWS_EC2_METADATA_DISABLED": "true", "CLAUDE_CODE_MAX_RETRIES": "1"}  # fmt: skip
        # the lead's own environment, which the tmux server (and so a new pane) does not have: set by a script,
        # so that no key is in a command line
        script = tmp_path / "lead.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in provider.items())
        lead = cli.line("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "tmux", "--model", "haiku")
        script.write_text(f"{exports}exec {lead} > {tmp_path}/out.txt 2> {tmp_path}/err.txt\n")
        rc = tmp_path / "rc.txt"
        pane = tmux.start(env, work, options={"remain-on-exit": "on"})
        tmux.respawn(pane, f"sh {shlex.quote(str(script))}; echo $? > {rc}")
        wait_until(lambda: rc.exists() and rc.read_text().strip() != "", 90, "the lead to exit")
        requests = server.requests
    err = (tmp_path / "err.txt").read_text()
    assert rc.read_text().strip() == "0", err
    assert "LEAD-DONE" in (tmp_path / "out.txt").read_text()
    alice = [r for r in requests if str(r.get("route", "")).startswith("alice-")]
    assert {r["route"] for r in alice} >= {"alice-hello", "alice-shutdown"}
    for record in alice:  # the teammate's own requests: the provider, the model id, the lead's region and keys
        assert record["path"] == f"/model/{HAIKU}/invoke-with-response-stream"
        assert (record["cloud"]["auth"], record["cloud"]["region"]) == ("sigv4", "eu-west-3")
    for path in config_root.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
