"""ExitPlanMode: hand in a finished plan — to the team lead for approval when a teammate, else to the person.

A teammate's plan goes to its lead by message; a lead's or solo agent's goes to `ctx.hooks.approve_plan`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agentteams.errors import AgentTeamsError, UnsafePathError
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import epoch_ms, now_iso
from agentteams.store.protocol import PlanApprovalRequest, plan_digest
from agentteams.tools.base import Tool, ToolContext, ToolKind, ToolResult


def plan_request_id(agent: str) -> str:
    return f"plan_approval-{epoch_ms()}@{agent}"


def _read_plan(args: dict[str, Any], ctx: ToolContext) -> str | None:
    """The plan file's text when it has some, else the `plan` argument."""
    if ctx.plan_file is not None:
        try:  # never through a planted link: what it points at is not the plan
            text = (safe_paths.read_bytes(ctx.plan_file) or b"").decode("utf-8")
        except (OSError, UnicodeDecodeError, UnsafePathError):
            text = ""
        if text.strip():
            return text
    plan = args.get("plan")
    return plan if isinstance(plan, str) and plan.strip() else None


class ExitPlanModeTool(Tool):
    name = "ExitPlanMode"
    description = (
        "Call this when you are in plan mode and your implementation plan is complete, to ask for approval "
        "to start making changes. Write the plan to the plan file first, or pass it as `plan`. Only for "
        "tasks that will change code; a pure research or question-answering task needs no plan approval. "
        "In a team, the plan goes to the team lead: wait for their answer before changing anything."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"plan": {"type": "string", "description": "The plan, when it is not in the plan file."}},
    }
    kind: ClassVar[ToolKind] = "plan"

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        plan = _read_plan(args, ctx)
        if plan is None:
            where = f"write it to {ctx.plan_file} or " if ctx.plan_file else ""
            return ToolResult.error(f"There is no plan yet: {where}pass it as `plan`.")
        if ctx.team_name and not ctx.is_lead:
            return self._ask_lead(plan, ctx)
        return self._ask_person(plan, ctx)

    @staticmethod
    def _ask_person(plan: str, ctx: ToolContext) -> ToolResult:
        """The person approves at the prompt (headless: the configured rule); approval leaves plan mode."""
        data = {"plan": plan, "planFilePath": str(ctx.plan_file) if ctx.plan_file else None}
        if ctx.hooks.approve_plan is None:
            return ToolResult.error("Nobody can approve a plan in this session: stay in plan mode.")
        if not ctx.hooks.approve_plan(plan):
            return ToolResult(
                "The user did not approve the plan. Stay in plan mode: ask what to change, revise the plan, and "
                "call ExitPlanMode again.",
                data={**data, "approved": False},
            )
        return ToolResult(
            f"The user approved your plan: you are out of plan mode (now {ctx.hooks.permission_mode()}) and may "
            f"start implementing it.\n\nPlan:\n{plan}",
            data={**data, "approved": True},
        )

    @staticmethod
    def _ask_lead(plan: str, ctx: ToolContext) -> ToolResult:
        assert ctx.team_name is not None
        request_id = plan_request_id(ctx.agent_name)
        msg = PlanApprovalRequest(
            sender=ctx.agent_name, timestamp=now_iso(), plan_file_path=str(ctx.plan_file or ""),
            plan_content=plan, request_id=request_id,
        )  # fmt: skip
        mail = ctx.store.mail
        try:
            lead = ctx.store.teams.read(ctx.team_name).lead_name
            mail.send(ctx.team_name, lead, msg.to_text(), sender=ctx.agent_name, color=ctx.color)
        except AgentTeamsError as e:
            return ToolResult.error(f"Could not send the plan to the team lead: {e}")
        ctx.signals.awaiting_plan_approval = request_id
        ctx.signals.plan_digest = plan_digest(plan)
        return ToolResult(
            f"Your plan was sent to {lead} for approval (request {request_id}). Stay in plan mode and end "
            "your turn: the answer arrives as a message. If approved you can start implementing; if "
            "rejected, revise the plan using the feedback and call ExitPlanMode again.",
            data={"request_id": request_id, "plan": plan},
        )


PLAN_TOOLS = (ExitPlanModeTool,)
