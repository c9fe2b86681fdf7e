"""A plan-mode teammate and the lead's verdict on its plan: the verdict taken (or refused), and, for a teammate
restarted with its conversation (a resumed lead's restart) while its plan awaited one, the request found again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentteams import diagnostics
from agentteams.agent.permissions.policy import parse_mode
from agentteams.store.api import Mail
from agentteams.store.records import Envelope
from agentteams.team.delivery import message_block
from agentteams.tools.runtime_hooks import PERMISSION_MODES

if TYPE_CHECKING:
    from agentteams.team.teammate.runtime import TeammateRuntime
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


def answer_plan(rt: TeammateRuntime, env: Envelope, msg: PlanApprovalResponse) -> str | None:
    """Leave plan mode on approval; either way the model reads the verdict as plain words."""
    signals = rt.ctx.signals
    if env.unverified:  # no authority: a plan it answers is resolved as rejected, its text shown marked
        if signals.awaiting_plan_approval:
            signals.awaiting_plan_approval = signals.plan_digest = None
        return message_block(env)
    if msg.request_id != signals.awaiting_plan_approval:
        diagnostics.debug("%s: a plan verdict for %s answers no plan of ours", rt.name, msg.request_id)
        return None
    digest = msg.plan_digest
    if rt.trust.lead_key is not None and msg.approved and digest != signals.plan_digest:
        diagnostics.warning("%s: a plan approval names another plan (digest %s); ignored", rt.name, digest)
        return None
    signals.awaiting_plan_approval = signals.plan_digest = None
    if msg.approved:
        wanted = msg.permission_mode  # a mode we do not know (a newer CLI's) falls back like no mode at all
        mode = wanted if wanted in PERMISSION_MODES and wanted != "plan" else rt.mode_after_plan
        rt.session.policy.mode = parse_mode(mode)
        rt.teams.set_mode(rt.team, rt.name, mode)
        text = "[Plan Approved] Your plan was approved by the team lead: you may now make changes."
    else:
        text = f"[Plan Rejected] The team lead rejected your plan. Feedback: {msg.feedback or '(none)'}"
    return message_block(Envelope(sender=env.sender, text=text, timestamp=env.timestamp, color=env.color))
