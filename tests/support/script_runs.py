"""Each CLI, the real claude 2.1.332 and ours, run once with the same arguments against a scripted server of its own
(or refusing them before any request): what the interop tests of scripts and headless flags compare."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from agentteams.mockapi import MockServer
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.headless import KEY

Which = Literal["claude", "ours"]
WHICH: tuple[Which, ...] = ("claude", "ours")
SIDE = {"name": "other", "turns": [{"content": [{"type": "text", "text": "x"}], "repeat": 50}]}  # claude's side calls


def spec(*answers: dict[str, Any]) -> dict[str, Any]:
    return {"routes": [{"name": "main", "match": {"tools": True}, "turns": list(answers)}, SIDE]}


def text(said: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": said}]}


Run = tuple[Which, subprocess.CompletedProcess[str], MockServer]
UNREACHABLE = "http://127.0.0.1:9"  # for lines refused before any request


def real_config(tmp_path: Path, cwd: Path) -> Path:
    """The real CLI's config dir, seeded for the newest version with `cwd` trusted."""
    config = tmp_path / "real-config"
    rc.seed_home(config, [cwd], rc.NEWEST)
    return config


def command(which: Which, claude: Path, cli: Cli, config: Path, args: tuple[str, ...], base_url: str,
            extra: dict[str, str] | None = None) -> tuple[list[str], dict[str, str]]:  # fmt: skip
    """One CLI's command line for `args` and its environment (with `extra`) for the server at `base_url`."""
    more = extra or {}
    if which == "claude":
        return [str(claude), *args], rc.claude_env(config, base_url, extra=more)
    return cli.argv(*args), {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": base_url, **more}


def both(claude: Path, cli: Cli, tmp_path: Path, cwd: Path, servers: list[MockServer], script: dict[str, Any],
         *args: str, stdin: str = "", extra: dict[str, str] | None = None) -> Iterator[Run]:  # fmt: skip
    """Each CLI run once with `args` (and the variables `extra`) against a server of its own: (which, the run, its
    server)."""
    config = real_config(tmp_path, cwd)
    for which in WHICH:
        server = MockServer(script).start()
        servers.append(server)
        argv, env = command(which, claude, cli, config, args, server.base_url, extra)
        proc = subprocess.run(argv, env=env, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120,
                              check=False)  # fmt: skip
        yield which, proc, server


def both_refuse(claude: Path, cli: Cli, tmp_path: Path, cwd: Path, *args: str,
                stdin: str = "") -> list[tuple[Which, subprocess.CompletedProcess[str]]]:  # fmt: skip
    """Each CLI run once with `args` that it must refuse before asking the model (there is none to reach): each
    must exit 1 with nothing on stdout."""
    config = real_config(tmp_path, cwd)
    runs = []
    for which in WHICH:
        argv, env = command(which, claude, cli, config, args, UNREACHABLE)
        proc = subprocess.run(argv, env=env, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=60,
                              check=False)  # fmt: skip
        assert proc.returncode == 1 and proc.stdout == "", (which, proc)
        runs.append((which, proc))
    return runs


def model_requests(server: MockServer) -> list[dict[str, Any]]:
    """The requests for the model that offered tools: the conversation's own, not the real CLI's side calls."""
    return [r for r in server.requests if r["path"].startswith("/v1/messages") and r["body"].get("tools")]
