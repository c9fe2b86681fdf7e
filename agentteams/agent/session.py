"""One agent session for the lead or a solo run: model client, tools, permissions, prompt, transcript.

The composition the CLI (and later the team runtimes) start from; reports through callbacks, never prints.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Literal

from agentteams import diagnostics
from agentteams.agent.hookpoints import EndReason, HookPoints
from agentteams.agent.loop import Agent, AgentEvent, AgentSettings, Answer, PermissionAsk, TurnResult
from agentteams.agent.memory import Memory, load_memory
from agentteams.agent.permissions import (
    PermissionPolicy,
    PermissionRuleError,
    Rule,
    offered_tools,
    parse_mode,
    parse_rule,
    parse_rules,
)
from agentteams.agent.prompts import Identity, system_prompt
from agentteams.model.aliases import resolve_model
from agentteams.model.pricing import UsageLedger
from agentteams.model.types import ModelClient
from agentteams.settings.types import Settings
from agentteams.store.api import Store
from agentteams.store.files import FileStore
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.transcripts import Transcript
from agentteams.tools.base import Tool, ToolContext
from agentteams.tools.hooks import PermissionMode, RuntimeHooks
from agentteams.tools.registry import all_tools, subagent_tools

SUBAGENT_GUIDANCE = (
    "You are a subagent started for one job. Work on it with the tools you have, then answer with one "
    "complete final report: the caller sees only that report, not your intermediate steps."
)


@dataclass
class SessionOptions:
    cwd: Path
    model: str = "sonnet"
    permission_mode: str = "default"
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    append_system_prompt: str | None = None
    max_turns: int | None = None
    interactive: bool = False
    session_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    team_role: Literal["lead", "teammate"] | None = "lead"
    identity: Identity | None = None  # set for a teammate: its name, team, lead and colour
    plan_mode_required: bool = False  # a teammate that must have its plan approved before changing anything
    settings: Settings = field(default_factory=Settings)  # the merged settings files: rules, directories


def settings_rules(settings: Settings, kind: str) -> list[Rule]:
    """`permissions.<kind>` rules, each labelled with the file it came from; an unreadable one is skipped
    with a warning (one bad line in a shared file should not stop every run)."""
    rules: list[Rule] = []
    for i, text in enumerate(getattr(settings.permissions, kind)):
        origin = settings.origins.get(f"permissions.{kind}[{i}]")
        try:
            rules.append(parse_rule(text, str(origin) if origin else "settings"))
        except PermissionRuleError as e:
            diagnostics.warning("%s (permissions.%s in %s): skipped", e, kind, origin or "settings")
    return rules


class Session:
    """Builds and holds the main agent; `run(prompt)` plays one user turn."""

    def __init__(
        self,
        options: SessionOptions,
        client: ModelClient,
        *,
        layout: Layout | None = None,
        store: Store | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
        ask: Callable[[PermissionAsk], Answer] | None = None,
        secrets: tuple[str | None, ...] = (),
    ) -> None:
        self.options = options
        self.layout = layout or Layout.from_env()  # this machine's own files: transcripts, plans
        self.store: Store = store or FileStore(self.layout)  # the team's shared state
        self.model = resolve_model(options.model)
        self.client = client
        self.ledger = UsageLedger()
        self._outer = on_event or (lambda _e: None)
        cwd = str(options.cwd)
        self.transcript = Transcript(
            self.layout.transcript_file(cwd, options.session_id), options.session_id, cwd=cwd, secrets=secrets
        )
        me = options.identity
        self.name = me.name if me else LEAD_NAME
        self.ctx = ToolContext(
            cwd=options.cwd, store=self.store, session_id=options.session_id, agent_name=self.name,
            team_name=me.team if me else None, color=me.color if me else None, is_lead=me is None,
        )  # fmt: skip
        self.ctx.plan_file = self.layout.plan_file(options.session_id)
        mode = parse_mode(options.permission_mode)
        settings = options.settings
        disallowed = [*settings_rules(settings, "deny"), *parse_rules(options.disallowed_tools, "--disallowedTools")]
        allowed = [*settings_rules(settings, "allow"), *parse_rules(options.allowed_tools, "--allowedTools")]
        self.policy = PermissionPolicy(
            mode=mode, allowed=allowed, disallowed=disallowed, cwd=options.cwd, plan_file=self.ctx.plan_file,
            interactive=options.interactive, asked=settings_rules(settings, "ask"),
            additional_dirs=[Path(d).expanduser() for d in settings.permissions.additional_directories],
        )  # fmt: skip
        self.hooks = HookPoints.build(
            settings, cwd=options.cwd, session_id=options.session_id, transcript_path=str(self.transcript.path),
            permission_mode=self._mode, secrets=secrets,
        )  # fmt: skip
        self.hooks.asks_person = me is None
        self.ctx.hooks = RuntimeHooks(
            model=self.model, permission_mode=self._mode, run_subagent=self._run_subagent,
            approve_plan=self._approve_plan if me is None else None,  # a teammate's plan goes to its lead
            task_created=self.hooks.task_created, task_completed=self.hooks.task_completed,
        )  # fmt: skip
        self.tools: list[Tool] = offered_tools(all_tools(), mode, disallowed)
        system = system_prompt(
            cwd=cwd, model=self.model, date=date.today().isoformat(), team_role=options.team_role,
            identity=me, append=options.append_system_prompt,
        )  # fmt: skip
        # read once per session: the memory block must not change under the cached prefix mid-conversation
        self.memory: Memory = load_memory(options.cwd, self.layout.root)
        self.context = self.memory.prompt_text()
        started = self.hooks.session_start("startup", self.model)  # its context joins the memory block
        if started:
            self.context = "\n\n".join([*([self.context] if self.context else []), *started])
        agent_settings = AgentSettings(self.model, system, options.max_turns, name=self.name, context=self.context)
        self.agent = Agent(
            client, self.tools, self.ctx, self.policy, agent_settings, on_event=self._event_for(self.name), ask=ask,
            hooks=self.hooks if self.hooks.runner is not None else None,
        )  # fmt: skip

    def run(self, prompt: str) -> TurnResult:
        return self.agent.run(prompt)

    def end(self, reason: EndReason = "other") -> None:
        """SessionEnd hooks (once), after any hook still running on its own thread."""
        self.hooks.session_end(reason)

    def listen(self, fn: Callable[[AgentEvent], None]) -> None:
        """Also send this session's own events to `fn` (after the ones registered before)."""
        prior = self._outer

        def both(event: AgentEvent) -> None:
            prior(event)
            fn(event)

        self._outer = both

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    def _event_for(self, agent: str) -> Callable[[AgentEvent], None]:
        def handle(event: AgentEvent) -> None:
            self.transcript.team = self.ctx.team_name  # `agentteams logs` finds a team's transcripts by it
            if event.kind in ("user", "assistant", "tool_results") and event.message is not None:
                self.transcript.record(event.kind, agent, message=event.message)
            if event.kind == "assistant" and event.usage is not None:
                self.ledger.record(agent, self.model, event.usage)
            if agent == self.name:
                self._outer(event)

        return handle

    def _mode(self) -> PermissionMode:
        return self.policy.mode

    def _approve_plan(self, plan: str) -> bool:
        """ExitPlanMode of the lead or a solo agent: the person answers at the prompt ("always" also accepts
        edits from then on); headless, only an allow rule naming ExitPlanMode approves (then edits are
        accepted: nobody is there to approve them one by one)."""
        if self.policy.mode != "plan":
            return True
        if self.agent.ask is not None and self.options.interactive:
            reason = "leave plan mode and start implementing this plan?"
            answer = self.agent.ask(PermissionAsk("ExitPlanMode", None, {"plan": plan}, reason))
            if answer == "deny":
                return False
            self.policy.mode = "acceptEdits" if answer == "always" else "default"
            return True
        if not self.policy.allows_by_rule("ExitPlanMode", "plan", None):
            return False
        self.policy.mode = "acceptEdits"
        return True

    def _run_subagent(self, kind: str, prompt: str, model: str | None) -> str:
        """Run a synchronous subagent with its own conversation and return its final text."""
        name = f"{self.name}/{kind}"
        sub_model = resolve_model(model) if model else self.model
        system = system_prompt(
            cwd=str(self.options.cwd), model=sub_model, date=date.today().isoformat(), append=SUBAGENT_GUIDANCE
        )
        ctx = ToolContext(
            cwd=self.options.cwd, store=self.store, session_id=self.options.session_id,
            agent_name=self.ctx.agent_name, team_name=self.ctx.team_name, interrupt=self.ctx.interrupt,
            hooks=RuntimeHooks(
                model=sub_model, permission_mode=self._mode, task_created=self.hooks.task_created,
                task_completed=self.hooks.task_completed,
            ),
        )  # fmt: skip
        sub = Agent(
            self.client, subagent_tools(kind, self.tools), ctx, self.policy,
            AgentSettings(sub_model, system, self.options.max_turns, name=name, context=self.context),
            on_event=self._event_for(name), hooks=self.hooks.for_subagent(f"{name}-{uuid.uuid4().hex[:8]}", kind),
        )  # fmt: skip
        return sub.run(prompt).text
