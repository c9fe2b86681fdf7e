"""The lead's verdict on a teammate's plan, as the teammate takes it; and, for a plan-mode teammate restarted with its
conversation (a resumed lead's restart) while its plan awaited that verdict, the request found again."""

from __future__ import annotations

from agentteams import diagnostics
from agentteams.store.api import Mail
from agentteams.store.protocol import PlanApprovalRequest, PlanApprovalResponse, parse_message, plan_digest
from agentteams.store.records import Envelope
from agentteams.team.delivery import message_block
from agentteams.team.teammate.live_changes import LiveChanges
from agentteams.tools.runtime_hooks import TurnSignals


def take_verdict(
    env: Envelope, msg: PlanApprovalResponse, signals: TurnSignals, changes: LiveChanges, *, keyed: bool
) -> str | None:
    """Leave plan mode on approval; either way the model reads the verdict as plain words (None: no plan of ours).
    `keyed`: the lead handed this teammate its key, so an approval must name the plan it approves."""
    name = changes.name
    if env.unverified:  # no authority: a plan it answers is resolved as rejected, its text shown marked
        if signals.awaiting_plan_approval:
            signals.awaiting_plan_approval = signals.plan_digest = None
        return message_block(env)
    if msg.request_id != signals.awaiting_plan_approval:
        diagnostics.debug("%s: a plan verdict for %s answers no plan of ours", name, msg.request_id)
        return None
    digest = msg.plan_digest
    if keyed and msg.approved and digest != signals.plan_digest:
        diagnostics.warning("%s: a plan approval names another plan (digest %s); ignored", name, digest)
        return None
    signals.awaiting_plan_approval = signals.plan_digest = None
    if msg.approved:
        changes.plan_approved(msg.permission_mode)
        text = "[Plan Approved] Your plan was approved by the team lead: you may now make changes."
    else:
        text = f"[Plan Rejected] The team lead rejected your plan. Feedback: {msg.feedback or '(none)'}"
    return message_block(Envelope(sender=env.sender, text=text, timestamp=env.timestamp, color=env.color))


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
