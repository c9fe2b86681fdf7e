"""Nodes as the end-to-end tests run them: `agentteams node` processes started and stopped, their API keys, and the
"machines" (a config root each on Redis, the test's own on the file store) whose processes reach the store."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.api import Store
from agentteams.store.file.store import FileStore
from agentteams.store.paths import Layout
from agentteams.store.redis.connection import parse_url
from agentteams.store.redis.store import RedisStore
from tests.support.cli import Cli
from tests.support.procs import child_env

NODE_KEYS = {"n1": "test-key-node1-0123456789abcdef", "n2": "test-key-node2-0123456789abcdef"}


def base_env(config_root: Path, server: MockServer, key: str) -> dict[str, str]:
    env = child_env(config_root)
    env.update(ANTHROPIC_API_KEY=key, ANTHROPIC_BASE_URL=server.base_url, CLAUDE_CODE_MAX_RETRIES="1")
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    return env


def start_node(cli: Cli, env: dict[str, str], name: str, workdir: Path, *extra: str) -> subprocess.Popen[str]:
    workdir.mkdir(parents=True, exist_ok=True)
    return cli.popen(
        "node", "--name", name, "--workdir", str(workdir), "--heartbeat", "0.25", *extra, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


class Machines:
    """Where each "machine" keeps its config (the test's root on the file store, which they must share; a root
    each on Redis) and how its processes reach the store (a node is told --store; the lead has AGENTTEAMS_STORE)."""

    def __init__(self, kind: str, config_root: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
        self.kind, self.tmp_path, self.config_root = kind, tmp_path, config_root
        self.url = request.getfixturevalue("redis_server").url if kind == "redis" else ""
        self.store: Store = RedisStore(parse_url(self.url)) if self.url else FileStore(Layout(config_root))

    def root(self, machine: str) -> Path:
        if not self.url:
            return self.config_root
        root = self.tmp_path / machine / "claude"
        root.mkdir(parents=True, exist_ok=True)
        return root

    def env(self, machine: str, server: MockServer, key: str, *, lead: bool = False) -> dict[str, str]:
        env = base_env(self.root(machine), server, key)
        env.pop("AGENTTEAMS_STORE", None)
        if lead and self.url:
            env["AGENTTEAMS_STORE"] = self.url
        return env

    def node_args(self) -> list[str]:
        return ["--store", self.url] if self.url else []

    def stored(self) -> bytes:
        """Everything the store holds now, as bytes (to look for what must never be there)."""
        data = b"".join(p.read_bytes() for p in self.tmp_path.rglob("*") if p.is_file() and "claude" in p.parts)
        if isinstance(self.store, RedisStore):
            client = self.store.client
            readers = {"string": client.get, "hash": client.hgetall, "set": client.smembers, "stream": client.xrange}
            ranged = {"list": client.lrange, "zset": client.zrange}
            for key in client.keys("*"):
                kind = client.type(key)
                value = ranged[kind](key, 0, -1) if kind in ranged else readers[kind](key)
                data += f"{key} {value}".encode()
        return data


def stop_node(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
    return err
