"""Providers end to end: a real `agentteams -p` with CLAUDE_CODE_USE_BEDROCK / CLAUDE_CODE_USE_VERTEX against the
scripted server standing in for each endpoint: the answer comes through, the request went to the provider's route
with Claude Code's model id, no credential lands in output or files, and a missing extra or a bad region is one line."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from tests.support.cli import Cli

ANSWER = "ANSWER-THROUGH-THE-PROVIDER"
SECRET = "aws-secret-proc-0123456789SECRET"
CLEARED = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL", "AWS_REGION",
    "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "CLOUD_ML_REGION",
)  # fmt: skip


def serve(servers: list[MockServer]) -> MockServer:
    answer = {"content": [{"type": "text", "text": ANSWER}]}
    server = MockServer({"routes": [{"name": "main", "match": {"tools": True}, "turns": [answer]}]}).start()
    servers.append(server)
    return server


def run(cli: Cli, cwd: Path, tmp_path: Path, provider: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in cli.env().items() if k not in CLEARED and not k.startswith("CLAUDE_CODE_USE_")}
    env.update({"AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"), "AWS_EC2_METADATA_DISABLED": "true",
                "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
                "CLAUDE_CODE_MAX_RETRIES": "0"})  # fmt: skip
    env.update(provider)
    proc = cli("-p", *args, env=env, cwd=cwd, timeout=120)
    assert SECRET not in proc.stdout + proc.stderr
    return proc


def bedrock(base_url: str, **extra: str) -> dict[str, str]:
    return {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "eu-west-3", "AWS_ACCESS_KEY_ID": "AKIDPROCEXAMPLE",
            "AWS_SECRET_ACCESS_KEY": SECRET, "ANTHROPIC_BEDROCK_BASE_URL": base_url, **extra}  # fmt: skip


def vertex(base_url: str, **extra: str) -> dict[str, str]:
    return {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "europe-west1", "ANTHROPIC_VERTEX_PROJECT_ID": "proj-e2e",
            "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1", "ANTHROPIC_VERTEX_BASE_URL": f"{base_url}/v1", **extra}  # fmt: skip


def model_calls(server: MockServer) -> list[dict[str, Any]]:
    return [r for r in server.requests if r.get("cloud") and r["status"] == 200]


def no_secret_in(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path


def test_p_through_bedrock(cli: Cli, tmp_path: Path, config_root: Path, servers: list[MockServer]) -> None:
    server = serve(servers)
    proc = run(cli, tmp_path, tmp_path, bedrock(server.base_url), "hi", "--model", "haiku")
    assert proc.returncode == 0, proc.stderr
    assert ANSWER in proc.stdout
    [call] = model_calls(server)
    model = "eu.anthropic.claude-haiku-4-5-20251001-v1:0"  # Claude Code's: eu-west-3's inference profile
    assert call["path"] == f"/model/{model}/invoke-with-response-stream"
    assert (call["cloud"]["region"], call["cloud"]["auth"]) == ("eu-west-3", "sigv4")  # signed for the region
    no_secret_in(config_root)  # the transcript, the logs


def test_p_through_vertex_with_anthropic_model(
    cli: Cli, tmp_path: Path, config_root: Path, servers: list[MockServer]
) -> None:
    server = serve(servers)
    proc = run(cli, tmp_path, tmp_path, vertex(server.base_url, ANTHROPIC_MODEL="claude-sonnet-4-5"), "hi")
    assert proc.returncode == 0, proc.stderr
    assert ANSWER in proc.stdout
    [call] = model_calls(server)
    # an undated name goes as given, as 2.1.332 sends it
    assert call["path"] == ("/v1/projects/proj-e2e/locations/europe-west1/publishers/anthropic/models/"
                            "claude-sonnet-4-5:streamRawPredict")  # fmt: skip
    assert call["cloud"]["auth"] == "none"  # CLAUDE_CODE_SKIP_VERTEX_AUTH: a gateway authenticates


def test_p_without_the_extra_is_one_line(cli: Cli, tmp_path: Path, servers: list[MockServer]) -> None:
    server = serve(servers)
    hidden = tmp_path / "no-boto"
    hidden.mkdir()
    # as if boto3 / botocore were not installed: an import of them fails, and a lookup finds nothing
    hide = "import sys\nsys.modules['botocore'] = None\nsys.modules['boto3'] = None\n"
    (hidden / "sitecustomize.py").write_text(hide)
    proc = run(cli, tmp_path, tmp_path, bedrock(server.base_url, PYTHONPATH=str(hidden)), "hi")
    assert proc.returncode != 0
    assert proc.stderr.splitlines() == [
        "agentteams: error: CLAUDE_CODE_USE_BEDROCK is set but the AWS SDK (boto3) is not installed: "
        "pip install 'agentteams[bedrock]'"
    ]
    assert server.requests == []


def test_p_with_a_bad_region_is_one_line(cli: Cli, tmp_path: Path, servers: list[MockServer]) -> None:
    server = serve(servers)
    proc = run(cli, tmp_path, tmp_path, bedrock(server.base_url, AWS_REGION="eu west 3"), "hi")
    assert proc.returncode != 0
    assert proc.stderr.splitlines() == [
        "agentteams: error: AWS_REGION 'eu west 3' is not an AWS region (expected e.g. us-east-1 or eu-west-3)"
    ]
    assert server.requests == []


def test_p_names_the_provider_endpoint_it_could_not_reach(cli: Cli, tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = run(cli, tmp_path, tmp_path, bedrock(f"http://127.0.0.1:{port}"), "hi")
    assert proc.returncode != 0
    [line] = proc.stderr.splitlines()
    assert f"cannot reach Amazon Bedrock at http://127.0.0.1:{port}" in line
    assert "api.anthropic.com" not in line and "ANTHROPIC_BASE_URL" not in line


def test_doctor_shows_the_provider_and_tries_its_endpoint(cli: Cli, tmp_path: Path, servers: list[MockServer]) -> None:
    server = serve(servers)
    env = {k: v for k, v in cli.env().items() if k not in CLEARED and not k.startswith("CLAUDE_CODE_USE_")}
    proc = cli("doctor", "--json", env={**env, **bedrock(server.base_url)})
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["api key"]["status"] == "ok" and "Amazon Bedrock (eu-west-3)" in checks["api key"]["detail"]
    assert checks["api url"]["status"] == "ok" and server.base_url in checks["api url"]["detail"]
    assert [r["method"] for r in server.requests] == ["HEAD"]  # no credential sent: nothing but a HEAD
    bad = cli("doctor", "--json", env={**env, **bedrock(server.base_url, AWS_REGION="mars")})
    key = {c["name"]: c for c in json.loads(bad.stdout)["checks"]}["api key"]
    assert key["status"] == "fail" and key["detail"].startswith("AWS_REGION 'mars' is not an AWS region")
    assert SECRET not in proc.stdout + bad.stdout


def test_p_through_vertex_set_in_the_settings_env(
    cli: Cli, tmp_path: Path, config_root: Path, servers: list[MockServer]
) -> None:
    """As Claude Code's docs suggest: the provider's variables in the user settings' `env`, not the shell's."""
    server = serve(servers)
    settings = {"env": vertex(server.base_url, CLOUD_ML_REGION="us-east5")}
    (config_root / "settings.json").write_text(json.dumps(settings))
    proc = run(cli, tmp_path, tmp_path, {}, "hi", "--model", "haiku")
    assert proc.returncode == 0, proc.stderr
    [call] = model_calls(server)
    assert call["path"].endswith("/projects/proj-e2e/locations/us-east5/publishers/anthropic/models/"
                                 "claude-haiku-4-5@20251001:streamRawPredict")  # fmt: skip
