"""Member events of a team: what a config change did to its membership (joined, left, died, returned) and to a
member's mode or model, as the entries the Redis store adds to the team's event stream beside its task events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentteams.store.records import TeamConfig

MemberChange = Literal["joined", "left", "died", "returned", "mode", "model"]


@dataclass(frozen=True)
class MemberEvent:
    """One change of one member; `value` is its new mode or model (empty for the others)."""

    kind: MemberChange
    agent: str
    value: str = ""

    def fields(self) -> dict[str, str]:
        """The stream entry: `op` says it is a member event (task events have op create/claim/update/...)."""
        return {"op": "member", "kind": self.kind, "agent": self.agent, "value": self.value}


def member_events(before: TeamConfig, after: TeamConfig) -> list[MemberEvent]:
    """What changed between two versions of a config, members in the order they appear."""
    old = {m.name: m for m in before.members}
    new = {m.name: m for m in after.members}
    departed_before = {m.name for m in before.departed or []}
    departed_now = {m.name for m in after.departed or []}
    out: list[MemberEvent] = []
    for name in new.keys() - old.keys():
        out.append(MemberEvent("returned" if name in departed_before - departed_now else "joined", name))
    for name in old.keys() - new.keys():
        out.append(MemberEvent("died" if name in departed_now else "left", name))
    for name in old.keys() & new.keys():
        if (mode := new[name].mode) != old[name].mode:
            out.append(MemberEvent("mode", name, mode or ""))
        if (model := new[name].model) != old[name].model:
            out.append(MemberEvent("model", name, model or ""))
    order = [m.name for m in [*after.members, *before.members]]
    return sorted(out, key=lambda e: (order.index(e.agent), e.kind))
