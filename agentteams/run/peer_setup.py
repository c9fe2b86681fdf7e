"""A session's place among the independent sessions on this machine (agent/peers.py), wired to its lead runtime: what
arrives goes to the runtime (its next tool result, or a turn of its own), turns mark it busy and idle, ListAgents and
SendMessage reach it. Interactive, -p, SDK and background sessions have one; teammates talk through their team."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from agentteams import diagnostics
from agentteams.agent.loop import AgentEvent
from agentteams.agent.peers import SETTING, PeerEndpoint, PeerWiring, policy_setting
from agentteams.errors import AgentTeamsError
from agentteams.store.paths import Layout
from agentteams.team.delivery import TeamEvent
from agentteams.team.lead.runtime import LeadRuntime

OFF_VAR = "AGENTTEAMS_PEERS"  # "0": this session has no socket and no record (others cannot find or reach it)
BG_JOB_VAR = "AGENTTEAMS_BG_JOB"  # set in a background session (run/background.py): its record's kind is "bg"


def session_name(given: str | None, cwd: str, session_id: str) -> str:
    """-n's name, else the folder's name and two hex digits, as claude names an unnamed -p session (`proja-6d`)."""
    if given:
        return given
    base = re.sub(r"[^a-z0-9._-]+", "-", os.path.basename(cwd.rstrip("/")).lower()).strip("-") or "session"
    return f"{base}-{session_id.replace('-', '')[:2]}"


class TurnEnders(list[Callable[[Any], None]]):
    """The runtime's one turn-end callback, calling each of these in turn."""

    def __call__(self, result: Any) -> None:
        for ender in self:
            ender(result)


def start_peers(
    runtime: LeadRuntime, on_team_event: Callable[[TeamEvent], None] | None, turn_enders: TurnEnders
) -> list[Callable[[], None]]:  # fmt: skip
    """Publish the session and listen; what takes it away again (nothing when it takes no part)."""
    if os.environ.get(OFF_VAR) == "0":
        return []
    session = runtime.session
    options = session.options

    def show(line: str) -> None:
        if on_team_event is not None:
            on_team_event(TeamEvent("notice", "sessions", line))
        else:
            diagnostics.warning("%s", line)

    wiring = PeerWiring(
        mode=lambda: str(runtime.ctx.hooks.permission_mode()),
        policy=lambda: policy_setting(options.settings.merged.get(SETTING)),
        hear=runtime.hear, show=show,
    )  # fmt: skip
    cwd, sid = str(options.cwd), runtime.ctx.session_id
    endpoint = PeerEndpoint(Layout.from_env(), sid, options.cwd, session_name(options.name, cwd, sid), wiring,
                            kind="bg" if os.environ.get(BG_JOB_VAR) else "interactive",
                            entrypoint="cli" if options.interactive else "sdk-cli")  # fmt: skip
    try:
        endpoint.start()
    except (OSError, AgentTeamsError) as e:  # messaging is an extra: the session runs without it
        diagnostics.warning("other sessions cannot reach this one: %s", e)
        endpoint.close()
        return []

    def heard(event: AgentEvent) -> None:
        if event.kind == "user":
            endpoint.busy()

    def ended(result: Any) -> None:
        if runtime.idle:
            endpoint.idle(str(getattr(result, "text", "") or ""))

    session.listen(heard)
    turn_enders.append(ended)
    runtime.ctx.hooks.peers = endpoint
    return [endpoint.close]
