"""Interop tier, request defaults beyond the lead's own: a subagent's requests carry what the lead's carry (its model's
max_tokens, thinking, effort, context management and their betas, the flags included), in ours as in the real CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.script_runs import both

pytestmark = pytest.mark.timeout(120)

BETAS = {"interleaved-thinking-2025-05-14", "context-management-2025-06-27", "effort-2025-11-24"}


def script() -> dict[str, Any]:
    ask = {"description": "look", "prompt": "SUBMARK look around", "subagent_type": "general-purpose"}
    call = {"type": "tool_use", "name": "Agent", "input": ask}
    return {"routes": [
        {"name": "sub", "match": {"tools": True, "first_user": "SUBMARK"}, "turns": ["sub result"]},
        {"name": "main", "match": {"tools": True, "any": "MAINMARK"}, "turns": [{"content": [call]}, "main done"]},
    ], "fallback": "x"}  # fmt: skip


def shape(request: dict[str, Any]) -> dict[str, Any]:
    body = request["body"]
    header = request["headers"].get("anthropic-beta", "")
    return {"model": body["model"], "max_tokens": body["max_tokens"], "thinking": body.get("thinking"),
            "output_config": body.get("output_config"), "context_management": body.get("context_management"),
            "betas": sorted(set(header.split(",")) & BETAS)}  # fmt: skip


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("args", [(), ("--effort", "low"), ("--model", "claude-sonnet-4-5")])
def test_a_subagents_requests_are_shaped_as_the_real_clis(
    claude: Path, cli: Cli, tmp_path: Path, proj: Path, servers: list[MockServer], args: tuple[str, ...]
) -> None:
    seen = []
    line = ("-p", "MAINMARK go", "--dangerously-skip-permissions", *args)
    for which, proc, server in both(claude, cli, tmp_path, proj, servers, script(), *line):
        assert proc.returncode == 0, (which, proc.stderr)
        subs = [r for r in server.requests if r.get("route") == "sub"]
        mains = [r for r in server.requests if r.get("route") == "main"]
        assert subs and mains, [r.get("route") for r in server.requests]
        seen.append((shape(mains[0]), shape(subs[0])))
    (real_main, real_sub), (our_main, our_sub) = seen
    assert real_sub == real_main  # the real CLI's subagent sends what its lead sends ...
    assert our_sub == real_sub and our_main == real_main  # ... and so do ours
