"""A session's endpoint that was still to be published when the session closed: a tool waiting for it goes on (it
would otherwise wait for a publication that never comes)."""

from __future__ import annotations

import threading
from typing import Any, cast

from agentteams.run.peer_setup import PeerStart, TurnEnders


def test_a_wait_after_the_close_of_an_unpublished_endpoint_returns() -> None:
    start = PeerStart(cast(Any, None), None, TurnEnders())  # closed before its first request: never published
    start.close()
    waiter = threading.Thread(target=start.wait, name="peers-pending", daemon=True)
    waiter.start()
    waiter.join(5.0)
    assert not waiter.is_alive(), "ListAgents' wait for the endpoint never returned"
