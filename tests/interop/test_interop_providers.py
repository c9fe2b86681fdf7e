"""Interop tier, providers: the real Claude Code CLI and ours, `-p` with the same Bedrock or Vertex variables against
the scripted server standing in for the provider, request the same route: the same model id (alias mapping, the
region's inference profile) in the same region and project. The real CLI also reads our AWS event-stream frames.
(A first-party id such as claude-opus-4-1-20250805 is sent as it is by 2.1.197 and mapped by 2.1.330; ours maps it.)
Where an older version maps the alias to another model (ccversions.TRAITS `aliases`), its request must carry that
model's id, and ours, given that id, must send it the same way (its region override, its path)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli

pytestmark = pytest.mark.timeout(180)
ANSWER = "ANSWER-FROM-THE-PROVIDER"
BEDROCK = {"CLAUDE_CODE_USE_BEDROCK": "1", "CLAUDE_CODE_SKIP_BEDROCK_AUTH": "1"}
VERTEX = {"CLAUDE_CODE_USE_VERTEX": "1", "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1", "ANTHROPIC_VERTEX_PROJECT_ID": "proj-i"}
CASES = [
    ("sonnet", {**BEDROCK, "AWS_REGION": "eu-west-3"}),
    ("haiku", {**BEDROCK, "AWS_REGION": "ca-central-1"}),  # no geography of its own: the global profile
    ("sonnet", {**BEDROCK, "AWS_REGION": "us-gov-west-1"}),
    ("global.anthropic.claude-sonnet-4-5-20250929-v1:0", {**BEDROCK, "AWS_REGION": "us-east-1"}),  # passes through
    # each model's own region: sonnet is 4.5 for 2.1.197 and 2.1.330, 5.5 for 2.1.332
    ("sonnet", {**VERTEX, "CLOUD_ML_REGION": "europe-west1", "VERTEX_REGION_CLAUDE_4_5_SONNET": "us-east5",
                "VERTEX_REGION_CLAUDE_5_5_SONNET": "us-central1"}),
]  # fmt: skip


def model_request(server: MockServer) -> dict[str, Any]:
    """The one conversation request (with tools) the run made through the provider's route."""
    calls = [r for r in server.requests if r.get("cloud") and r["status"] == 200 and r["body"].get("tools")]
    assert len(calls) == 1, [r["path"] for r in server.requests]
    return calls[0]


def with_base_url(provider: dict[str, str], server: MockServer) -> dict[str, str]:
    name = "ANTHROPIC_BEDROCK_BASE_URL" if "CLAUDE_CODE_USE_BEDROCK" in provider else "ANTHROPIC_VERTEX_BASE_URL"
    suffix = "" if "CLAUDE_CODE_USE_BEDROCK" in provider else "/v1"
    return {**provider, name: server.base_url + suffix}


IDS = [f"{m[:20]}-{p.get('AWS_REGION', 'vertex')}" for m, p in CASES]


@pytest.mark.parametrize(("model", "provider"), CASES, ids=IDS)
def test_both_clis_call_the_provider_with_the_same_model_id(
    claude_version: str, claude: Path, cli: Cli, tmp_path: Path, servers: list[MockServer], model: str,
    provider: dict[str, str],
) -> None:  # fmt: skip
    cwd = tmp_path / "proj"
    cwd.mkdir()
    answer = {"content": [{"type": "text", "text": ANSWER}], "repeat": 20}
    script = {"routes": [{"name": "main", "turns": [answer]}]}
    real_server, our_server = MockServer(script).start(), MockServer(script).start()
    servers += [real_server, our_server]
    config = tmp_path / "real-config"
    rc.seed_home(config, [cwd], claude_version)
    real_env = rc.claude_env(config, "http://127.0.0.1:9", extra=with_base_url(provider, real_server))
    real_env.pop("ANTHROPIC_API_KEY")
    cleared = ("ANTHROPIC_", "AWS_", "CLAUDE_CODE_USE_", "CLOUD_ML_REGION", "VERTEX_REGION_")
    our_env = {k: v for k, v in cli.env().items() if not k.startswith(cleared)}
    our_env.update(with_base_url(provider, our_server))
    host = "bedrock" if "CLAUDE_CODE_USE_BEDROCK" in provider else "vertex"
    older = ccv.TRAITS[claude_version].aliases.get(host, {}).get(model)  # this version's own model for the alias
    ours_model = older[0] if older else model
    runs = [([str(claude), "-p", "hi", "--model", model], real_env),
            (cli.argv("-p", "hi", "--model", ours_model), our_env)]  # fmt: skip
    for argv, env in runs:
        proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=90, check=False)
        assert proc.returncode == 0 and ANSWER in proc.stdout, (argv[0], proc.stderr)
    theirs, ours = model_request(real_server), model_request(our_server)
    if older:
        assert theirs["cloud"]["model"] == ours_model, f"claude {claude_version} sent another model for {model}"
    assert ours["path"] == theirs["path"]
    assert {k: ours["cloud"][k] for k in ("model", "project", "stream")} == {
        k: theirs["cloud"][k] for k in ("model", "project", "stream")}  # fmt: skip
