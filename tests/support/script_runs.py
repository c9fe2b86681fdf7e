"""Each CLI, the real claude 2.1.332 and ours, run once with the same arguments against a scripted server of its own:
what the interop tests of scripts (`-p`, json results, refused calls) compare."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.headless import KEY

SIDE = {"name": "other", "turns": [{"content": [{"type": "text", "text": "x"}], "repeat": 50}]}  # claude's side calls


def spec(*answers: dict[str, Any]) -> dict[str, Any]:
    return {"routes": [{"name": "main", "match": {"tools": True}, "turns": list(answers)}, SIDE]}


def text(said: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": said}]}


Run = tuple[str, subprocess.CompletedProcess[str], MockServer]


def both(claude: Path, cli: Cli, tmp_path: Path, cwd: Path, servers: list[MockServer], script: dict[str, Any],
         *args: str, stdin: str = "") -> Iterator[Run]:  # fmt: skip
    """Each CLI run once with `args` against a server of its own: (which, the run, its server)."""
    config = tmp_path / "real-config"
    rc.seed_home(config, [cwd], rc.NEWEST)
    for which in ("claude", "ours"):
        server = MockServer(script).start()
        servers.append(server)
        if which == "claude":
            argv, env = [str(claude), *args], rc.claude_env(config, server.base_url)
        else:
            argv, env = cli.argv(*args), {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.base_url}
        proc = subprocess.run(argv, env=env, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120,
                              check=False)  # fmt: skip
        yield which, proc, server
