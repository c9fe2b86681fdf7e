"""Ours driven by an Agent SDK program in the proc tier: a private config root, an API key, and a scripted server of
the program's own (the `Where` the run/test_sdk_*.py tests hand their programs)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.procs import child_env
from tests.support.sdk_programs import Where


@contextmanager
def ours(cli: Cli, config_root: Path, work: Path, script: dict[str, Any]) -> Iterator[Where]:
    with MockServer(script) as server:
        env = {**child_env(config_root), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-t"}
        yield Where(Path(cli.argv()[0]), env, work, server)
