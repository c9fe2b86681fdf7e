"""The lead's side of nodes: a spawner that places a teammate on a node (by order through the store, waiting for the
node's reply) or, with no node registered or `node: "local"`, hands it to the lead's own spawner. A node teammate
is alive while its node's record (refreshed by the node's heartbeat) lists it."""

from __future__ import annotations

import time
from typing import Any

from agentteams.errors import AgentTeamsError
from agentteams.store.api import Store
from agentteams.store.node_records import NodeOrder, NodeRecord
from agentteams.store.outages import judged
from agentteams.team.nodes.placement import choose
from agentteams.team.spawn.base import Handle, Spawner, SpawnRequest

REPLY_TIMEOUT = 20.0  # seconds a lead waits for a node to start a teammate (a cold start and a clone take a while)
# seconds the store must have answered before a missing record means a node is gone: a record's life, and a beat
NODE_GRACE = NodeRecord.ttl_ms / 1000 + 1.0
RECORD_CACHE = 0.25  # seconds a node's record read answers for every teammate on it (the lead asks twice a second)


class NodeSpawner:
    """Teammates on nodes, else on the lead's machine through `local` (whose backend it reports)."""

    def __init__(self, store: Store, local: Spawner, *, reply_timeout: float = REPLY_TIMEOUT) -> None:
        self.store = store
        self.local = local
        self.backend: Any = local.backend
        self.reply_timeout = reply_timeout
        self.placed: dict[str, tuple[str, str]] = {}  # teammate name -> its node and team
        self._records: dict[str, tuple[float, NodeRecord | None]] = {}

    @property
    def takes_lead_key(self) -> bool:
        """Ours on a node take it; a lead whose own teammates cannot (an old `claude`) makes none while no node is
        registered, as before."""
        return self.local.takes_lead_key or bool(self.store.nodes.live())

    def spawn(self, req: SpawnRequest) -> Handle:
        # a relaunch resumes a conversation whose transcript is on this machine: it goes on here
        node = None if req.resume else choose(req.placement, self.store.nodes.live(), self._placed_by_node())
        if node is None:
            if not self.local.takes_lead_key:
                req.lead_key = None  # an old `claude` refuses a flag it does not know
            return self.local.spawn(req)
        order = _order(req)
        self.store.nodes.order(node.name, order)
        reply = self.store.nodes.await_reply(order.order_id, self.reply_timeout)
        if reply is None:  # it may yet start late: told to stop it then
            self.store.nodes.order(node.name, NodeOrder("stop", req.team, req.name))
            raise AgentTeamsError(f"node {node.name} did not answer within {self.reply_timeout:g}s")
        if not reply.ok:
            raise AgentTeamsError(f"node {node.name}: {reply.error}")
        self.placed[req.name] = (node.name, req.team)
        self._records.pop(node.name, None)
        self.store.teams.set_member_fields(req.team, req.name, node=node.name, cwd=reply.cwd or None)
        return Handle(req.name, "tmux" if reply.backend == "tmux" else "in-process")

    def alive(self, handle: Handle, team: str) -> bool:
        where = self.placed.get(handle.name)
        if where is None:
            return self.local.alive(handle, team)
        record = self._record(where[0])
        if record is None:  # expired; but one that expired while the store was away says nothing of the node
            return not judged(self.store.steady, NODE_GRACE)
        return f"{handle.name}@{team}" in record.running

    def stop(self, handle: Handle) -> None:
        where = self.placed.pop(handle.name, None)
        if where is None:
            self.local.stop(handle)
            return
        if self._record(where[0]) is None:  # cut off: back, its teammate finds itself released and leaves (and a
            return  # stale completion of its meanwhile is refused by the task's fencing token)
        self.store.nodes.order(where[0], NodeOrder("stop", where[1], handle.name))

    def focus(self, handle: Handle) -> None:
        where = self.placed.get(handle.name)
        if where is not None:
            raise AgentTeamsError(f"{handle.name} runs on node {where[0]}: run `agentteams attach` there")
        focus = getattr(self.local, "focus", None)
        if focus is not None:
            focus(handle)

    def _record(self, node: str) -> NodeRecord | None:
        now = time.monotonic()
        cached = self._records.get(node)
        if cached is not None and now - cached[0] < RECORD_CACHE:
            return cached[1]
        record = self.store.nodes.read(node)
        self._records[node] = (now, record)
        return record

    def _placed_by_node(self) -> dict[str, list[str]]:
        by_node: dict[str, list[str]] = {}
        for name, (node, its_team) in self.placed.items():
            by_node.setdefault(node, []).append(f"{name}@{its_team}")
        return by_node


def _order(req: SpawnRequest) -> NodeOrder:
    """The spawn order: what the teammate is started with, without a secret (see NodeOrder)."""
    return NodeOrder(
        "spawn", req.team, req.name, color=req.color, model=req.model, parent_session_id=req.parent_session_id,
        permission_mode=req.permission_mode, plan_mode_required=req.plan_mode_required, agent_type=req.agent_type,
        allowed_tools=list(req.allowed_tools), disallowed_tools=list(req.disallowed_tools),
        lead_key=req.lead_key.argument() if req.lead_key is not None else None, settings=req.settings.for_teammate(),
        repo=req.placement.repo, commit=req.placement.commit,
    )  # fmt: skip
