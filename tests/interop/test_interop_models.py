"""Model names as Claude Code 2.1.330 resolves them: each alias (and `default`) names the same model id in the
request ours and the real CLI send, and a `[1m]` suffix comes off the id, with the 1M-context beta only for a model
whose window is not 1M already."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.model.aliases import LONG_BETA
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.headless import KEY

NAMES = ("sonnet", "opus", "haiku", "default", "sonnet[1m]", "claude-sonnet-4-6[1m]", "claude-opus-5-5[1m]")


def _sent(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[str, bool]:
    """(the model id of the main request, whether it asked for the 1M context) of one `-p hi` run."""
    spec: dict[str, Any] = {"routes": [{"name": "any", "turns": [{"content": [{"type": "text", "text": "ok"}],
                                                                 "repeat": 20}]}]}  # fmt: skip
    with MockServer(spec) as server:
        proc = subprocess.run([*argv], env={**env, "ANTHROPIC_BASE_URL": server.base_url}, cwd=cwd,
                              capture_output=True, text=True, timeout=90, check=False)  # fmt: skip
        assert proc.returncode == 0, (argv[0], proc.stderr[-2000:])
        [main] = [r for r in server.requests if r["path"].startswith("/v1/messages") and r["body"].get("tools")][:1]
    beta = main.get("headers", {}).get("anthropic-beta", "")
    return main["body"]["model"], LONG_BETA in beta.split(",")


@pytest.mark.parametrize("claude_version", [rc.DEFAULT])
def test_each_model_name_sends_what_the_real_cli_sends(claude: Path, cli: Cli, tmp_path: Path) -> None:
    cwd = tmp_path / "proj"
    cwd.mkdir()
    config = tmp_path / "real-config"
    rc.seed_home(config, [cwd], rc.DEFAULT)
    ours_env = {**cli.env(), "ANTHROPIC_API_KEY": KEY}
    for name in NAMES:
        real = _sent([str(claude), "-p", "hi", "--model", name], rc.claude_env(config, "http://127.0.0.1:9"), cwd)
        ours = _sent(cli.argv("-p", "hi", "--model", name), ours_env, cwd)
        assert ours == real, (name, ours, real)
    unnamed = _sent(cli.argv("-p", "hi"), ours_env, cwd)
    assert unnamed == _sent([str(claude), "-p", "hi"], rc.claude_env(config, "http://127.0.0.1:9"), cwd)
