"""How a lead answers a teammate's permission request: by its judge (the person) or its own policy, written
back as Claude Code's `permission_response`."""

from __future__ import annotations

from collections.abc import Callable

from agentteams.agent.session import Session
from agentteams.errors import AgentTeamsError
from agentteams.store.paths import LEAD_NAME
from agentteams.store.protocol import PermissionRequest, PermissionResponse

# (request, member name) -> approve?  Interactive: the person; headless: the lead's policy
PermissionJudge = Callable[[PermissionRequest, str], bool]


def decide(session: Session, judge: PermissionJudge | None, msg: PermissionRequest, who: str) -> bool:
    """The verdict: the judge's when there is one, else what the lead's own rules say of the same call."""
    if judge is not None:
        return judge(msg, who)
    tool = session.tool(msg.tool_name)
    if tool is None:
        return False
    try:
        target = tool.permission_target(msg.input, session.options.cwd)
    except AgentTeamsError:
        target = None
    return session.policy.decide(tool.name, tool.kind, target).behavior == "allow"


def response(msg: PermissionRequest, allow: bool) -> PermissionResponse:
    return PermissionResponse(
        request_id=msg.request_id, subtype="success" if allow else "error",
        response={"updated_input": msg.input, "permission_updates": []} if allow else None,
        error=None if allow else "The team lead denied this request.",
    )  # fmt: skip


def answer(session: Session, judge: PermissionJudge | None, team: str, msg: PermissionRequest, who: str) -> bool:
    """Decide and write the answer to `who`'s inbox; the verdict."""
    allow = decide(session, judge, msg, who)
    session.store.mail.send(team, who, response(msg, allow).to_text(), sender=LEAD_NAME)
    return allow
