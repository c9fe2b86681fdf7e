"""Where a teammate runs: the `Task` inputs `node`, `repo` and `commit` as a typed placement, and the choice of a
node (the one asked for, else the least loaded with a free slot, else none: the lead's own machine)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentteams.errors import AgentTeamsError
from agentteams.store.node_records import NodeRecord

LOCAL = "local"  # `node: "local"`: on the lead's own machine, whatever nodes there are


class PlacementError(AgentTeamsError):
    """A placement that cannot be made; its message is the one line the lead's model reads."""


@dataclass(frozen=True)
class Placement:
    """What a spawn call asks of where its teammate runs."""

    node: str | None = None
    repo: str | None = None  # a repository URL the node clones fresh for the teammate
    commit: str | None = None  # the commit checked out in that clone

    @classmethod
    def of(cls, args: Mapping[str, Any]) -> Placement:
        values = {k: args.get(k) for k in ("node", "repo", "commit")}
        for key, value in values.items():
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise PlacementError(f"{key} must be a non-empty string")
        if values["commit"] and not values["repo"]:
            raise PlacementError("commit needs repo: the repository the node clones for the teammate")
        if values["repo"] and values["node"] == LOCAL:
            raise PlacementError("repo and commit are for a teammate on a node, not on the lead's machine")
        if args.get("cwd") or args.get("isolation"):  # directories of the lead's machine: the teammate runs there
            if values["node"] not in (None, LOCAL):
                raise PlacementError("cwd and isolation are directories of your machine: not with node")
            values["node"] = LOCAL
        return cls(**{k: v.strip() if isinstance(v, str) else None for k, v in values.items()})


def load(record: NodeRecord, ours: Iterable[str]) -> tuple[int, int]:
    """A node's teammates now: those its record lists, with those this lead placed there since its last beat."""
    return len(set(record.running) | set(ours)), record.slots


def choose(place: Placement, nodes: list[NodeRecord], placed: Mapping[str, Iterable[str]]) -> NodeRecord | None:
    """The node a teammate goes to; None for the lead's own machine (asked for, or no node registered)."""
    if place.node == LOCAL:
        return None
    if place.node is not None:
        record = next((n for n in nodes if n.name == place.node), None)
        if record is None:
            live = ", ".join(n.name for n in nodes) or "none"
            raise PlacementError(f"no node named {place.node!r} is registered (live nodes: {live})")
        return record
    if not nodes:
        if place.repo:
            raise PlacementError("repo is for a teammate on a node, and no node is registered")
        return None
    loads = {n.name: load(n, placed.get(n.name, ())) for n in nodes}
    free = [n for n in nodes if loads[n.name][0] < n.slots]
    if not free:
        busy = ", ".join(f"{n.name} {loads[n.name][0]}/{n.slots}" for n in nodes)
        raise PlacementError(f"every node is full ({busy}); wait for a teammate to finish, or name node: local")
    return min(free, key=lambda n: (loads[n.name][0] / max(1, n.slots), loads[n.name][0], n.name))
