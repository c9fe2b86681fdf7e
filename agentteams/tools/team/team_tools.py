"""TeamCreate, TeamDelete and SendMessage: a session's team and the messages its members exchange.

SendMessage takes the seeds' `{type, recipient, content, ...}` and Claude Code 2.1's `{to, message}` alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from agentteams.errors import InvalidNameError, NotFoundError
from agentteams.pids import LeadProcess
from agentteams.store.api import Mail
from agentteams.store.fs.atomic_json import dump_compact, epoch_ms, now_iso
from agentteams.store.paths import LEAD_NAME, refuse_control
from agentteams.store.protocol import (
    CompactRequest,
    Message,
    PlanApprovalResponse,
    ShutdownApproved,
    ShutdownRejected,
    ShutdownRequest,
)
from agentteams.store.records import TeamConfig
from agentteams.tools.base import ToolContext, ToolInputError, ToolResult, require_str
from agentteams.tools.team.task_tools import CoordinationTool, optional_str

SEND_TYPES = ("message", "broadcast", "shutdown_request", "shutdown_response", "plan_approval_response",
              "compact_request", "mode_set_request", "model_set_request")  # fmt: skip


def json_result(data: dict[str, Any], *, is_error: bool = False) -> ToolResult:
    """A result the model reads as compact JSON, as Claude Code returns these tools' data."""
    return ToolResult(dump_compact(data), is_error=is_error, data=data)


class TeamCreateTool(CoordinationTool):
    name = "TeamCreate"
    description = (
        "Start a team that you lead: it gets a shared task list and an inbox per member. Create tasks, then "
        "spawn teammates to work on them. A session leads at most one team; delete it with TeamDelete."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "team_name": {"type": "string", "description": "Name of the new team."},
            "description": {"type": "string", "description": "What the team is for."},
            "agent_type": {"type": "string", "description": "Your role as lead (default: team-lead)."},
        },
        "required": ["team_name"],
    }

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        wanted = require_str(args, "team_name")
        if ctx.team_name:
            what = "Already leading" if ctx.is_lead else "Already a member of"
            return ToolResult.error(f'{what} team "{ctx.team_name}". Use TeamDelete first.')
        store = ctx.store.teams
        for config in store.list_teams():
            if isinstance(config, TeamConfig) and config.lead_session_id == ctx.session_id:
                return ToolResult.error(f'This session already leads team "{config.name}". Use TeamDelete first.')
        config = store.create(
            wanted, description=optional_str(args, "description"), lead_session_id=ctx.session_id,
            lead_agent_type=optional_str(args, "agent_type") or LEAD_NAME, cwd=str(ctx.cwd),
            lead_model=ctx.hooks.model or None, lead_process=LeadProcess.for_this_process(epoch_ms()),
        )  # fmt: skip
        ctx.team_name, ctx.is_lead, ctx.agent_name = config.name, True, LEAD_NAME
        return json_result({
            "team_name": config.name,
            "team_file_path": ctx.store.teams.location(config.name),
            "lead_agent_id": config.lead_agent_id,
        })  # fmt: skip


class TeamDeleteTool(CoordinationTool):
    name = "TeamDelete"
    description = (
        "Remove your team when the work is finished: its config, inboxes, task list and worktrees. Every "
        "teammate must have shut down first (send each a shutdown_request and wait for the approval)."
    )
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        team = ctx.team_name
        if not team:
            return json_result({"success": True, "message": "No team to clean up: this session is not in a team"})
        if not ctx.is_lead:
            return ToolResult.error(f'Only the lead of team "{team}" can delete it.')
        store = ctx.store.teams
        try:
            config = store.read(team)
        except NotFoundError:
            ctx.team_name = None
            return json_result({"success": True, "message": f'Team "{team}" was already gone', "team_name": team})
        others = [m.name for m in config.members if m.agent_id != config.lead_agent_id]
        if others:
            return ToolResult.error(
                f'Cannot delete team "{config.name}": {len(others)} teammate(s) still in it: {", ".join(others)}. '
                "Send each a shutdown_request with SendMessage and wait for their approval first."
            )
        from agentteams.tools.team import worktree_git

        if ctx.hooks.await_departures is not None:  # a teammate that just left may still be writing its last words
            ctx.hooks.await_departures()
        removed, kept = worktree_git.close_team(store, config.name, ctx.cwd)  # a dirty worktree is kept, and said
        warnings = kept + store.delete(config.name)
        ctx.team_name = None
        data: dict[str, Any] = {
            "success": True,
            "message": f'Cleaned up directories and worktrees for team "{config.name}"',
            "team_name": config.name,
        }
        if removed:
            data["worktrees"] = removed
        if warnings:
            data["warnings"] = warnings
        return json_result(data)


@dataclass
class Outgoing:
    """One SendMessage call, whichever input shape it came in."""

    kind: str
    to: str | None = None
    content: str | None = None  # the text; or the shutdown reason, or the plan feedback
    summary: str | None = None
    request_id: str | None = None
    approve: bool | None = None
    setting: str | None = None  # the new mode or model of a mode_set_request / model_set_request


def _first_str(*values: object) -> str | None:
    return next((v for v in values if isinstance(v, str) and v), None)


def _approve(value: object) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ToolInputError("`approve` must be true or false")


def parse_send(args: dict[str, Any]) -> Outgoing:
    """Read either shape: `{type, recipient, content, summary, request_id, approve}` or
    `{to, summary, message: text | {type, request_id, approve, reason | feedback}}`."""
    message = args.get("message")
    body: dict[str, Any] = message if isinstance(message, dict) else {}
    to = _first_str(args.get("recipient"), args.get("to"))
    try:
        refuse_control(to or "", "recipient")
    except InvalidNameError as e:
        raise ToolInputError(str(e)) from None
    kind = args.get("type") or body.get("type") or ("broadcast" if to == "*" else "message")
    if kind not in SEND_TYPES:
        raise ToolInputError(f"unknown message type {kind!r}; use one of {', '.join(SEND_TYPES)}")
    content = _first_str(
        args.get("content"), message, body.get("reason"), body.get("feedback"), body.get("content"),
        args.get("reason"), args.get("feedback"),
    )  # fmt: skip
    return Outgoing(
        kind=kind, to=None if to == "*" else to, content=content, summary=optional_str(args, "summary"),
        request_id=_first_str(args.get("request_id"), body.get("request_id"), body.get("requestId")),
        approve=_approve(args["approve"] if "approve" in args else body.get("approve")),
        setting=_first_str(body.get("mode"), body.get("model"), args.get("mode"), args.get("model")),
    )  # fmt: skip


def _need(value: Any, what: str, kind: str) -> Any:
    if value is None or value == "":
        raise ToolInputError(f"a {kind} needs {what}")
    return value


class SendMessageTool(CoordinationTool):
    name = "SendMessage"
    description = (
        "Send a message to a teammate, or to another agent session on this machine (by a name ListAgents gives, or the "
        "`from` of a cross-session message you got; such a message is plain text in `message`). Other agents never "
        "see your plain text output: this tool is the only "
        "way to reach them. Address teammates by name. Messages to you arrive by themselves, so there is "
        "no inbox to check. Types: message (to one teammate, with a short summary), broadcast (to everyone; "
        "costly, use rarely), shutdown_request (ask a teammate to stop; only when its work is done), "
        "shutdown_response (answer a shutdown request, echoing its request_id; approving ends your process), "
        "plan_approval_response (lead only: approve or reject a teammate's plan, echoing its request_id), "
        "compact_request (lead only: the teammate replaces its conversation by a summary when next idle, freeing "
        "its context; content says what the summary must keep), mode_set_request / model_set_request (lead only: "
        "change a live teammate's permission mode or model, with message {type, mode} or {type, model}). "
        "Report task progress with TaskUpdate, not with status messages."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": list(SEND_TYPES), "description": "What kind of message."},
            "recipient": {"type": "string", "description": "The teammate's name."},
            "content": {"type": "string", "description": "The text; the reason or the feedback for a response."},
            "summary": {"type": "string", "description": "A 5-10 word preview shown in the UI."},
            "request_id": {"type": "string", "description": "The request being answered."},
            "approve": {"type": "boolean", "description": "Approve (true) or reject (false) the request."},
            "notify_when_idle": {
                "type": "boolean",
                "description": "To another session on this machine (a name from "
                "ListAgents): it sends you one notice when it is next idle. Without a message: only "
                "that subscription.",
            },
            "to": {"type": "string", "description": "Same as recipient."},
            "message": {
                "description": "Same as content; or {type, request_id, approve, reason | feedback} for a response.",
                "anyOf": [{"type": "string"}, {"type": "object"}],
            },
        },
    }

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from agentteams.tools.team.peer_tools import send_to_peer  # another session on this machine, not a teammate

        peer = send_to_peer(args, _first_str(args.get("recipient"), args.get("to")), ctx)
        if peer is not None:
            return peer
        out = parse_send(args)
        if not ctx.team_name:
            return ToolResult.error(
                "SendMessage needs a team, and this session is not in one: create one with TeamCreate first."
            )
        mailbox = ctx.store.mail
        config = ctx.store.teams.read(ctx.team_name)
        handler = {
            "message": self._message, "broadcast": self._broadcast, "shutdown_request": self._shutdown_request,
            "shutdown_response": self._shutdown_response, "plan_approval_response": self._plan_response,
            "compact_request": self._compact_request, "mode_set_request": self._set_request,
            "model_set_request": self._set_request,
        }[out.kind]  # fmt: skip
        return handler(out, ctx, mailbox, config)

    @staticmethod
    def _recipient(out: Outgoing, ctx: ToolContext, mailbox: Mail, config: TeamConfig) -> str:
        name = mailbox.resolve_recipient(config, _need(out.to, "a recipient (recipient or to)", out.kind))
        if name == ctx.agent_name:
            raise ToolInputError(f"{name} is you: send a {out.kind} to another member of the team")
        return name

    def _message(self, out: Outgoing, ctx: ToolContext, mailbox: Mail, config: TeamConfig) -> ToolResult:
        name = self._recipient(out, ctx, mailbox, config)
        text = _need(out.content, "content (content or message)", "message")
        env = mailbox.send(config.name, name, text, sender=ctx.agent_name, summary=out.summary, color=ctx.color)
        target = config.member(name)
        routing = {
            "sender": ctx.agent_name, "senderColor": env.color, "target": f"@{name}",
            "targetColor": target.color if target else None, "summary": out.summary, "content": text,
        }  # fmt: skip
        return json_result({
            "success": True, "message": f"Message sent to {name}'s inbox", "msg_id": env.msg_id,
            "routing": {k: v for k, v in routing.items() if v is not None},
        })  # fmt: skip

    def _broadcast(self, out: Outgoing, ctx: ToolContext, mailbox: Mail, config: TeamConfig) -> ToolResult:
        text = _need(out.content, "content (content or message)", "broadcast")
        names = [m.name for m in config.members if ctx.agent_name not in (m.name, m.agent_id)]
        for name in names:
            mailbox.send(config.name, name, text, sender=ctx.agent_name, summary=out.summary, color=ctx.color)
        if not names:
            return json_result({"success": True, "message": "No teammates to broadcast to", "recipients": []})
        listed = ", ".join(names)
        message = f"Message broadcast to {len(names)} teammate(s): {listed}"
        return json_result({"success": True, "message": message, "recipients": names})

    def _shutdown_request(self, out: Outgoing, ctx: ToolContext, mailbox: Mail, config: TeamConfig) -> ToolResult:
        if not ctx.is_lead:  # as in Claude Code 2.1.330: a teammate would refuse it anyway
            return ToolResult.error("Only the team lead can ask a teammate to shut down.")
        name = self._recipient(out, ctx, mailbox, config)
        request_id = ShutdownRequest.new_request_id(name)
        msg = ShutdownRequest(request_id=request_id, sender=ctx.agent_name, reason=out.content, timestamp=now_iso())
        if ctx.hooks.shutdown_sent is not None:  # before sending: the approval may come back at once
            ctx.hooks.shutdown_sent(name, request_id)
        self._send(mailbox, config, name, msg, ctx)
        return json_result({
            "success": True, "message": f"Shutdown request sent to {name}. Request ID: {request_id}",
            "request_id": request_id, "target": name,
        })  # fmt: skip

    def _shutdown_response(
        self, out: Outgoing, ctx: ToolContext, mailbox: Mail, config: TeamConfig
    ) -> ToolResult:  # fmt: skip
        if ctx.is_lead:
            return ToolResult.error("The team lead does not answer shutdown requests; only teammates do.")
        request_id = _need(out.request_id, "the request_id being answered", "shutdown_response")
        approve = _need(out.approve, "approve (true or false)", "shutdown_response")
        lead, now = config.lead_name, now_iso()
        if not approve:
            reason = _need(out.content, "a reason when it rejects (content or reason)", "shutdown_response")
            msg: Message = ShutdownRejected(request_id=request_id, sender=ctx.agent_name, reason=reason, timestamp=now)
            self._send(mailbox, config, lead, msg, ctx)
            text = f'Shutdown rejected. Reason: "{reason}". Continuing to work.'
            return json_result({"success": True, "message": text, "request_id": request_id})
        requested = ctx.hooks.shutdown_requested
        if requested is not None and not requested(request_id):
            return json_result({
                "success": False, "request_id": request_id,
                "message": f"No shutdown request with ID {request_id} from your team lead has reached this "
                "session, so there is nothing to approve: keep working.",
            })  # fmt: skip
        me = config.member(ctx.agent_name)
        pane_id, backend = (me.tmux_pane_id or "", me.backend_type) if me else ("", None)
        msg = ShutdownApproved(
            request_id=request_id, sender=ctx.agent_name, timestamp=now, pane_id=pane_id, backend_type=backend
        )
        self._send(mailbox, config, lead, msg, ctx)
        ctx.signals.exit_requested = True  # the runtime ends this agent once the turn is over
        text = f"Shutdown approved. Sent confirmation to {lead}. Agent {ctx.agent_name} is now exiting."
        return json_result({"success": True, "message": text, "request_id": request_id})

    def _plan_response(self, out: Outgoing, ctx: ToolContext, mailbox: Mail, config: TeamConfig) -> ToolResult:
        if not ctx.is_lead:
            return ToolResult.error("Only the team lead can approve or reject a plan.")
        name = self._recipient(out, ctx, mailbox, config)
        request_id = _need(out.request_id, "the request_id being answered", "plan_approval_response")
        approve = _need(out.approve, "approve (true or false)", "plan_approval_response")
        if approve:
            mode = ctx.hooks.permission_mode()  # the teammate goes on in the lead's mode as it is now
            msg = PlanApprovalResponse(
                request_id=request_id, approved=True, timestamp=now_iso(),
                permission_mode=mode if mode != "plan" else "default",
            )  # fmt: skip
            # a 2.1.330 teammate holding a key refuses an approval that names no plan, or another one
            msg.plan_digest = ctx.hooks.plan_digest(request_id) if ctx.hooks.plan_digest is not None else None
            text = f"Plan approved for {name}. They leave plan mode and can start implementing."
        else:
            feedback = out.content or "The plan needs changes: revise it and submit it again."
            msg = PlanApprovalResponse(request_id=request_id, approved=False, feedback=feedback, timestamp=now_iso())
            text = f"Plan rejected for {name}; your feedback was sent to them."
        self._send(mailbox, config, name, msg, ctx)
        return json_result({"success": True, "message": text, "request_id": request_id})

    def _compact_request(self, out: Outgoing, ctx: ToolContext, mailbox: Mail, config: TeamConfig) -> ToolResult:
        if not ctx.is_lead:
            return ToolResult.error("Only the team lead can ask a teammate to compact.")
        name = self._recipient(out, ctx, mailbox, config)
        # only ours write presence: a real `claude` teammate would show the frame to its model, and not compact
        if ctx.store.presence.read(config.name, name) is None:
            return ToolResult.error(f"{name} is not an agentteams teammate (or has not started yet): it cannot be "
                                    "asked to compact.")  # fmt: skip
        msg = CompactRequest(sender=ctx.agent_name, instructions=out.content, timestamp=now_iso())
        self._send(mailbox, config, name, msg, ctx)
        text = f"Compact request sent to {name}: it compacts when next idle (`agentteams status` shows its context)."
        return json_result({"success": True, "message": text, "target": name})

    def _set_request(self, out: Outgoing, ctx: ToolContext, mailbox: Mail, config: TeamConfig) -> ToolResult:
        setter = ctx.hooks.set_teammate
        if not ctx.is_lead or setter is None:
            return ToolResult.error("Only the team lead can change a teammate's mode or model.")
        name = self._recipient(out, ctx, mailbox, config)
        what: Literal["mode", "model"] = "mode" if out.kind == "mode_set_request" else "model"
        value = _need(out.setting, f"the new {what} (message: {{type, {what}}})", out.kind)
        return json_result({"success": True, "message": setter(name, what, value), "target": name})

    @staticmethod
    def _send(mailbox: Mail, config: TeamConfig, to: str, msg: Message, ctx: ToolContext) -> None:
        mailbox.send(config.name, to, msg.to_text(), sender=ctx.agent_name, color=ctx.color)


TEAM_TOOLS = (TeamCreateTool, TeamDeleteTool, SendMessageTool)
