"""A lead's signing keys for its teammates, kept in its team's directory (0600, as every team file) so that a
lead resumed after a crash signs for the teammates it adopts with the keys on their command lines."""

from __future__ import annotations

import contextlib
import json

from agentteams.store import safefs
from agentteams.store.atomicjson import atomic_write_json
from agentteams.store.paths import Layout
from agentteams.store.signing import Keyring

FILE = "lead-keys.json"


def save_lead_keys(layout: Layout, keyring: Keyring, team: str) -> None:
    atomic_write_json(layout.team_dir(team) / FILE, keyring.lead_keys(team))


def restore_lead_keys(layout: Layout, keyring: Keyring, team: str) -> list[str]:
    """The teammates whose keys were restored (none when the file is missing or unreadable)."""
    raw = safefs.read_bytes(layout.team_dir(team) / FILE)
    keys: object = {}
    with contextlib.suppress(ValueError):
        keys = json.loads(raw or b"{}")
    if not isinstance(keys, dict):
        return []
    return [r for r, k in keys.items() if isinstance(k, str) and keyring.restore_lead_key(team, r, k)]
