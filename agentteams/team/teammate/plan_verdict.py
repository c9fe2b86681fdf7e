"""A plan-mode teammate restarted with its conversation (a resumed lead's restart) while its plan awaited the lead's
verdict: the request found again. The verdict itself is taken by `TeammateRuntime.answer_plan`."""

from __future__ import annotations

from agentteams.store.api import Mail
from agentteams.store.protocol import PlanApprovalRequest, PlanApprovalResponse, parse_message, plan_digest


def pending_plan(mailbox: Mail, team: str, name: str, lead: str) -> tuple[str, str] | None:
    """(request id, plan digest) of `name`'s last plan request to `lead` that no verdict in its inbox answers."""
    asked: PlanApprovalRequest | None = None
    for env in mailbox.read_live(team, lead):
        msg = parse_message(env.text)
        if env.sender == name and isinstance(msg, PlanApprovalRequest):
            asked = msg
    if asked is None:
        return None
    for env in mailbox.read_live(team, name):
        msg = parse_message(env.text)
        if isinstance(msg, PlanApprovalResponse) and msg.request_id == asked.request_id:
            return None
    return asked.request_id, plan_digest(asked.plan_content)
