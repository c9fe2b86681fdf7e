"""The node registry and order queues (store/nodes.py, store/redis/nodes.py) on both stores: a record lives while
its node beats and is gone soon after it stops; an order is taken once, in order; a reply reaches its waiter."""

from __future__ import annotations

import threading
import time

from agentteams.store.api import Store
from agentteams.store.node_records import NodeOrder, NodeRecord, NodeReply
from tests.support.wait import wait_until


def record(name: str, ttl_ms: int = 3000, running: list[str] | None = None) -> NodeRecord:
    return NodeRecord(name, "host-a", 2, "0.1.0", running=running or [], pid=1234, ttl_ms=ttl_ms)


def test_a_record_lives_while_it_beats_and_expires_after(store: Store) -> None:
    store.nodes.register(record("n1", ttl_ms=400, running=["alice@proj"]))
    store.nodes.register(record("n2"))
    found = store.nodes.read("n1")
    assert found is not None and found.running == ["alice@proj"] and found.host == "host-a" and found.slots == 2
    assert found.updated_at > 0 and found.started_at > 0
    assert [r.name for r in store.nodes.live()] == ["n1", "n2"]
    for _ in range(4):  # beats keep it past its ttl
        time.sleep(0.2)  # the beat interval itself, not a wait for another process
        store.nodes.register(record("n1", ttl_ms=400, running=["alice@proj"]))
    assert store.nodes.read("n1") is not None
    wait_until(lambda: store.nodes.read("n1") is None, 3, "n1's record to expire without beats")
    assert [r.name for r in store.nodes.live()] == ["n2"]
    store.nodes.remove("n2")
    assert store.nodes.live() == [] and store.nodes.read("n2") is None


def test_orders_are_taken_once_and_in_order(store: Store) -> None:
    for name in ("a", "b", "c"):
        store.nodes.order("n1", NodeOrder("spawn", "proj", name, lead_key=None))
    store.nodes.order("n2", NodeOrder("stop", "proj", "z"))
    taken = store.nodes.take_orders("n1", 1.0)
    assert [(o.kind, o.name, o.agent_id) for o in taken] == [("spawn", "a", "a@proj"), ("spawn", "b", "b@proj"),
                                                              ("spawn", "c", "c@proj")]  # fmt: skip
    started = time.monotonic()
    assert store.nodes.take_orders("n1", 0.3) == []
    assert time.monotonic() - started >= 0.25, "an empty queue is waited on for the timeout"
    assert [o.kind for o in store.nodes.take_orders("n2", 0.0)] == ["stop"]


def test_a_waiting_node_takes_an_order_as_it_arrives(store: Store) -> None:
    got: list[NodeOrder] = []
    waiter = threading.Thread(target=lambda: got.extend(store.nodes.take_orders("n1", 5.0)))
    waiter.start()
    started = time.monotonic()
    store.nodes.order("n1", NodeOrder("spawn", "proj", "alice"))
    waiter.join(10)
    assert [o.name for o in got] == ["alice"]
    assert time.monotonic() - started < 2.0


def test_a_reply_reaches_the_lead_waiting_for_it(store: Store) -> None:
    order = NodeOrder("spawn", "proj", "alice")
    replier = threading.Timer(0.2, lambda: store.nodes.reply(NodeReply(order.order_id, True, backend="in-process",
                                                                        cwd="/w")))  # fmt: skip
    replier.start()
    got = store.nodes.await_reply(order.order_id, 5.0)
    replier.join()
    assert got is not None and got.ok and got.cwd == "/w" and got.backend == "in-process"
    assert store.nodes.await_reply(order.order_id, 0.2) is None, "a reply is read once"
    assert store.nodes.await_reply("nobody", 0.2) is None
