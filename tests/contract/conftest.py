"""The contract suite's store: every test runs once on the file store and once on the Redis store (a private
redis-server of its own). The whole suite is in the `proc` tier: it starts servers and claiming processes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentteams.store.api import Store
from agentteams.store.file.store import FileStore
from agentteams.store.paths import Layout
from agentteams.store.redis.connection import parse_url
from agentteams.store.redis.store import RedisStore


@pytest.fixture(params=["file", "redis"])
def store_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Which store, with AGENTTEAMS_STORE set for the processes a test starts."""
    kind: str = request.param
    if kind == "redis":
        server = request.getfixturevalue("redis_server")
        monkeypatch.setenv("AGENTTEAMS_STORE", server.url)
    else:
        monkeypatch.delenv("AGENTTEAMS_STORE", raising=False)
    yield kind


@pytest.fixture
def store(store_kind: str, config_root: Path) -> Store:
    if store_kind == "redis":
        return RedisStore(parse_url(os.environ["AGENTTEAMS_STORE"]))
    return FileStore(Layout(config_root))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if not item.path.is_relative_to(here):
            continue  # this hook sees the whole session's items
        item.add_marker("proc")
        params = getattr(item, "callspec", None)
        if params is not None and params.params.get("store_kind") == "redis":
            item.add_marker("redis")
