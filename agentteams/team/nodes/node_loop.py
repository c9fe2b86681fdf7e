"""A node's loop (`agentteams node`): keep its record alive, take leads' orders, start each teammate with the node's
own spawner (its tmux session, or threads of this process) in the node's working directory (a fresh clone when the
order names a repository), and list the ones still running in its record, which is how a lead knows they live."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError
from agentteams.settings.load import load_settings
from agentteams.store.api import Store
from agentteams.store.node_records import NodeOrder, NodeRecord, NodeReply
from agentteams.store.outages import StoreUnavailable
from agentteams.store.paths import Layout, path_part
from agentteams.store.signing import LeadVerifyKey
from agentteams.team.nodes.logs import LogShipper
from agentteams.team.spawn.base import Handle, Spawner, SpawnRequest

BEAT = 1.0  # seconds between heartbeats; the record lives NodeRecord.ttl_ms past the last one


@dataclass
class Running:
    team: str
    handle: Handle
    cwd: Path


class NodeRunner:
    """Runs the teammates leads place on this node until `stop` is set; then stops them and unregisters."""

    def __init__(
        self, store: Store, record: NodeRecord, spawner: Spawner, workdir: Path, *, beat: float = BEAT,
        clone: Callable[[str, str | None, Path], None] | None = None, layout: Layout | None = None,
    ) -> None:  # fmt: skip
        self.store = store
        self.record = record
        self.spawner = spawner
        self.workdir = workdir
        self.beat = beat
        self.clone = clone or _git_clone
        self.running: dict[str, Running] = {}  # by agent id
        self._beaten = time.monotonic()  # the last beat the store took
        self.logs = LogShipper(store, layout) if layout is not None else None  # transcripts through the store

    def run(self, stop: threading.Event) -> None:
        self._register()
        next_beat = time.monotonic() + self.beat
        try:
            while not stop.is_set():
                for order in self._orders(stop, max(0.0, next_beat - time.monotonic())):
                    self._obey(order)
                if time.monotonic() >= next_beat:
                    self._ship_logs()
                    self._reap()
                    self._register()
                    next_beat = time.monotonic() + self.beat
        finally:
            for agent in list(self.running):
                self._stop(agent)
            with contextlib.suppress(AgentTeamsError, OSError):
                self.store.nodes.remove(self.record.name)

    def _orders(self, stop: threading.Event, timeout: float) -> list[NodeOrder]:
        """The orders waiting, or none while the store is away (the beats say when it is back)."""
        try:
            return self.store.nodes.take_orders(self.record.name, timeout)
        except StoreUnavailable as e:  # the store said so, once
            diagnostics.debug("node %s: cannot read orders: %s", self.record.name, e)
            stop.wait(max(timeout, self.beat))
            return []
        except Exception as e:  # redis-py's connection errors are no OSError; the store's client retried already
            diagnostics.warning("node %s: cannot read orders: %s: %s", self.record.name, type(e).__name__, e)
            stop.wait(max(timeout, self.beat))
            return []

    def _register(self) -> None:
        """The heartbeat: the record written again (a store that is briefly away is tried at the next beat)."""
        self.record.running = sorted(self.running)
        try:
            sent = time.monotonic()  # a record's ttl runs from its write: gaps are measured between the sends
            self.store.nodes.register(self.record)
            gap, self._beaten = sent - self._beaten, sent
            # stopped while the store answered: leads took this node for gone (not for the store's own outage: they
            # judge no one until it has been back a while, and the store said it was away)
            if gap * 1000 > self.record.ttl_ms and self.store.steady() > gap:
                diagnostics.warning(
                    "node %s: back after %.0fs out of touch; leads may have released its teammates (they leave by "
                    "themselves)", self.record.name, gap,
                )  # fmt: skip
        except StoreUnavailable as e:  # said once by the store; the next beat tries again
            diagnostics.debug("node %s: could not beat: %s", self.record.name, e)
        except (AgentTeamsError, OSError) as e:
            diagnostics.warning("node %s: could not beat: %s", self.record.name, e)
        except Exception as e:  # a dropped connection (redis-py's errors are no OSError): tried again next beat
            diagnostics.warning("node %s: could not beat: %s: %s", self.record.name, type(e).__name__, e)

    def _obey(self, order: NodeOrder) -> None:
        if order.kind == "stop":
            self._stop(order.agent_id)
            self._register()
            return
        try:
            reply = self._spawn(order)
        except Exception as e:  # whatever went wrong is the lead's one line, and the node goes on
            reply = NodeReply(order.order_id, False, f"could not start {order.name}: {e}")
        self._register()  # listed before the lead hears it started: its first liveness check finds it
        try:
            self.store.nodes.reply(reply)
        except Exception as e:  # the lead's wait ends without it, and it orders a stop
            diagnostics.warning("node %s: could not answer for %s: %s", self.record.name, order.name, e)

    def _spawn(self, order: NodeOrder) -> NodeReply:
        if order.agent_id in self.running:
            return NodeReply(order.order_id, False, f"{order.name} of team {order.team} already runs here")
        if len(self.running) >= self.record.slots:
            return NodeReply(order.order_id, False, f"full ({len(self.running)}/{self.record.slots} slots)")
        lead_key = LeadVerifyKey.parse(order.lead_key) if order.lead_key else None
        if order.lead_key and lead_key is None:
            return NodeReply(order.order_id, False, "the lead's verify key is malformed")
        cwd = self._directory(order)
        req = SpawnRequest(
            name=order.name, team=order.team, color=order.color, cwd=cwd, parent_session_id=order.parent_session_id,
            model=order.model, permission_mode=order.permission_mode, plan_mode_required=order.plan_mode_required,
            agent_type=order.agent_type, allowed_tools=order.allowed_tools, disallowed_tools=order.disallowed_tools,
            lead_key=lead_key, settings=load_settings(cwd, flag=order.settings),
        )  # fmt: skip
        handle = self.spawner.spawn(req)
        self.running[order.agent_id] = Running(order.team, handle, cwd)
        return NodeReply(order.order_id, True, backend=handle.backend, pane_id=handle.pane_id, cwd=str(cwd))

    def _directory(self, order: NodeOrder) -> Path:
        """The node's working directory, or for an order with a repository a fresh clone of it under that."""
        if not order.repo:
            return self.workdir
        where = self.workdir / "clones" / path_part(order.team, "team") / path_part(order.name)
        if where.exists():
            raise AgentTeamsError(f"{where} exists already: remove it, or give this teammate another name")
        where.parent.mkdir(parents=True, exist_ok=True)
        self.clone(order.repo, order.commit, where)
        return where

    def _ship_logs(self) -> None:
        for run in self.running.values():
            if self.logs is not None:
                try:
                    self.logs.ship(run.team, run.handle.name, run.cwd)
                except Exception as e:  # a store away for a moment: the same lines go at the next beat
                    diagnostics.debug("node %s: logs of %s not shipped: %s", self.record.name, run.handle.name, e)

    def _reap(self) -> None:
        """Forget the teammates that ended (shut down, or their team deleted)."""
        for agent, run in list(self.running.items()):
            if not self.spawner.alive(run.handle, run.team):
                self._forget(agent)

    def _stop(self, agent: str) -> None:
        run = self.running.get(agent)
        if run is not None:
            with contextlib.suppress(Exception):
                self.spawner.stop(run.handle)
            self._forget(agent)

    def _forget(self, agent: str) -> None:
        run = self.running.pop(agent, None)
        if run is not None and self.logs is not None:
            self.logs.forget(run.team, run.handle.name, run.cwd)


def _git_clone(url: str, commit: str | None, where: Path) -> None:
    """A fresh clone of `url` at `commit` (its default branch without one); a failure is one line."""
    import subprocess

    def git(*args: str, cwd: Path | None = None) -> None:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["failed"])[-1]
            raise AgentTeamsError(f"git {args[0]} {url}: {last}")

    git("clone", "--quiet", "--", url, str(where))
    if commit:
        git("-c", "advice.detachedHead=false", "checkout", "--quiet", commit, "--", cwd=where)
