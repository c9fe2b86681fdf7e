"""How `status` sees a member on a node: by its node's record (a process id of another machine says nothing
here), and the words it shows for where the member runs."""

from __future__ import annotations

from agentteams.store.api import Store
from agentteams.store.presence import UNRESPONSIVE_BEATS, Presence
from agentteams.store.records import Member


def node_state(store: Store, member: Member, presence: Presence | None) -> str | None:
    """The state of a member placed on a node: dead once its node's record expired or no longer lists it, else its
    own report (gone, unresponsive by missed beats, or its state); None for a member on the lead's machine."""
    if not member.node:
        return None
    record = store.nodes.read(member.node)
    if record is None or member.agent_id not in record.running:
        return "gone" if presence is not None and presence.state == "exited" else "dead"
    if presence is None:
        return "starting"
    if presence.state == "exited":
        return "gone"
    if presence.heartbeat_ms > 0 and presence.silent_ms() > UNRESPONSIVE_BEATS * presence.heartbeat_ms:
        return "unresponsive"
    return presence.state
