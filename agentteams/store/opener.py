"""Which store a command or runtime works on: the Redis store when AGENTTEAMS_STORE names one, else the file store."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentteams.store.api import Store
    from agentteams.store.paths import Layout

# redis://host:port/db picks the Redis store (store/redis/connection.py owns the rest); unset or "file": the files
ENV_STORE = "AGENTTEAMS_STORE"


def redis_store_configured() -> bool:
    """Whether AGENTTEAMS_STORE names a Redis store (checked without loading anything of it)."""
    url = os.environ.get(ENV_STORE, "").strip()
    return bool(url) and url != "file"


def open_store(layout: Layout | None = None) -> Store:
    """The store commands and runtimes work on: the Redis store when AGENTTEAMS_STORE names one
    (`redis://host:port/db`), else the file store under the config root, the one real `claude` processes share."""
    if redis_store_configured():
        url = os.environ.get(ENV_STORE, "").strip()
        from agentteams.store.redis.connection import parse_url
        from agentteams.store.redis.store import RedisStore

        return RedisStore(parse_url(url))
    from agentteams.store.file.store import FileStore

    return FileStore(layout)
