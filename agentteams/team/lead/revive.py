"""Bringing back a teammate that died while its lead ran: the `Task` tool with `name` and `resume: true` takes its
entry back from the departed ones (store/file/teams.py) and starts it with its own session resumed and a new key."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError
from agentteams.store.paths import LEAD_NAME
from agentteams.team.delivery import TeamEvent
from agentteams.team.lead.rekey import relaunch
from agentteams.tools.base import ToolInputError

if TYPE_CHECKING:
    from agentteams.team.lead.runtime import LeadRuntime

HINT = "To bring it back with its own conversation: the Task tool with its name, team_name and resume: true."


def revive(runtime: LeadRuntime, team: str, args: dict[str, Any]) -> str:
    """The tool result; the prompt, if any, reaches the teammate as the lead's next message."""
    name = str(args.get("name") or "")
    if name in runtime.handles:
        return f"{name} is running in team {team}: there is nothing to resume. Send it a message instead."
    member = runtime.store.teams.return_member(team, name)
    if member is None:
        raise ToolInputError(f"No teammate named {name} died in team {team}: nothing to resume (spawn it anew).")
    if not member.session_id:
        diagnostics.warning("teammate %s recorded no session: it comes back without its conversation", name)
    try:
        runtime.handles[name] = relaunch(runtime, team, member)
    except (AgentTeamsError, OSError) as e:
        runtime.store.teams.depart_member(team, name)  # still departed: a later resume may succeed
        raise ToolInputError(f"Could not start {name} again: {e}") from e
    prompt = str(args.get("prompt") or "").strip()
    if prompt:
        runtime.mailbox.send(team, name, prompt, sender=LEAD_NAME)
    runtime.hooks(TeamEvent("joined", name, f"{runtime.spawner.backend}, resumed", color=member.color))
    said = "with the prompt as your next message" if prompt else "idle until you send it a message"
    return f"{name} is back in team {team} with its own conversation ({member.agent_id}), {said}."
