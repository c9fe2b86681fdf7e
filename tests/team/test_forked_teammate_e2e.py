"""A forked teammate (ours; issue 31, item 3): a -p lead spawns `forky` with `subagent_type: "fork"` (in a tmux pane,
through the fork server and the seed file, or as a thread of the lead); forky's first request repeats the lead's
request up to its cache breakpoint (same tools, system prompt and messages), so it reads the lead's prompt cache, and
its identity comes after that prefix; a plain teammate spawned beside it reads none of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.mockapi.app import Record
from agentteams.mockapi.usage import strip_cache_control
from agentteams.store.paths import Layout
from tests.support import spawn_scripts as sp
from tests.support.cli import Cli
from tests.support.team_run import finish, lead_env, lead_in_tmux
from tests.support.team_script import REQUEST_ID, TEAM, say, tool
from tests.support.tmuxlab import Tmux

FORKY = "You are forky, a teammate"  # in forky's opening message only: its requests are found by it


def scenario() -> dict[str, Any]:
    lead = [
        tool("TeamCreate", team_name=TEAM),
        {"content": [{"type": "text", "text": "Forking a teammate."}, {"type": "tool_use", "name": "Task", "input": {
            "name": "forky", "team_name": TEAM, "subagent_type": "fork", "description": "forked mate",
            "prompt": "FORKJOB check the plan"}}]},
        tool("Task", name="plain", team_name=TEAM, description="plain mate", prompt="PLAINJOB check it too"),
        say("Both at work."),  # the turn ends; their messages start the next ones
        {**say("Both reported. LEAD-DONE"), "wait_for": ["FORK-REPORT", "PLAIN-REPORT"]},
    ]  # fmt: skip
    approve = tool("SendMessage", to="team-lead", message={"type": "shutdown_response", "request_id": REQUEST_ID,
                                                           "approve": True})  # fmt: skip
    return {"routes": [
        {"name": "forky-shutdown", "match": {"any": FORKY, "last_prompt": "shutdown_request"}, "turns": [approve] * 2},
        {"name": "forky", "match": {"any": FORKY}, "idle": "Noted.",
         "turns": [tool("SendMessage", to="team-lead", message="FORK-REPORT", summary="report"), say("Reported.")]},
        {"name": "plain-shutdown", "match": {"system": "Your name is plain", "last_prompt": "shutdown_request"},
         "turns": [approve] * 2},
        {"name": "plain", "match": {"system": "Your name is plain"}, "idle": "Noted.",
         "turns": [tool("SendMessage", to="team-lead", message="PLAIN-REPORT", summary="report"), say("Reported.")]},
        {"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def first(records: list[Record], route: str) -> Record:
    return sp.messages_requests(records, route)[0]


@pytest.mark.parametrize("mode", ["tmux", "in-process"])
def test_a_forked_teammates_first_request_reads_its_leads_prompt_cache(
    cli: Cli, config_root: Path, layout: Layout, tmp_path: Path, tmux: Tmux, mode: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with MockServer(scenario()) as server:
        _pane, rc = lead_in_tmux(tmux, cli, lead_env(config_root, server), work, tmp_path, "--teammate-mode", mode)
        run = finish(rc, tmp_path, server, timeout=120)
    assert run.rc == 0, run.err
    records = server.requests
    assert "LEAD-DONE" in str([r["response"] for r in sp.messages_requests(records, "lead")]), "both reports came"
    spawning = sp.messages_requests(records, "lead")[1]  # the lead's request answered with the fork's spawn
    forky, plain = first(records, "forky"), first(records, "plain")
    # the lead's prefix, byte for byte but for the cache marks: tools, system prompt, its messages, then its answer
    for key in ("model", "tools", "system"):
        assert strip_cache_control(forky["body"][key]) == strip_cache_control(spawning["body"][key]), key
    sent, inherited = spawning["body"]["messages"], forky["body"]["messages"]
    assert strip_cache_control(inherited[: len(sent)]) == strip_cache_control(sent)
    assert inherited[len(sent)] == {"role": "assistant", "content": spawning["response"]["content"]}
    # then its opening: the spawning call answered, who it is and its team's rules; then its lead's message
    opening = inherited[len(sent) + 1]["content"]
    assert [b["type"] for b in opening] == ["tool_result", "text"], opening
    assert opening[0]["tool_use_id"] == spawning["response"]["content"][1]["id"]
    assert FORKY in opening[1]["text"] and "Your name is forky" in opening[1]["text"]
    assert "FORKJOB check the plan" in str(inherited[-1]["content"])
    assert "Your name is forky" not in str(forky["body"]["system"])  # the identity is not in the shared prefix
    # the cache figures: forky reads all the lead had cached at that request; the plain teammate, whose system prompt
    # is its own, at most the tool list they share
    lead_cached = sp.usage(spawning)["cache_read_input_tokens"] + sp.usage(spawning)["cache_creation_input_tokens"]
    assert sp.usage(forky)["cache_read_input_tokens"] >= lead_cached > 0, (sp.usage(spawning), sp.usage(forky))
    assert sp.usage(plain)["cache_read_input_tokens"] < lead_cached, (sp.usage(spawning), sp.usage(plain))
    assert not list(layout.root.glob("agentteams/forks/*/*.json")), "the seed file is left behind"
