"""One agent session for the lead or a solo run: model client, tools, permissions, prompt, transcript.

The composition the CLI (and later the team runtimes) start from; reports through callbacks, never prints."""

from __future__ import annotations

import contextlib
import functools
import os
import uuid
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentteams import diagnostics
from agentteams.agent.agent_types import own_type
from agentteams.agent.checkpoints import FileCheckpoints, for_session
from agentteams.agent.compaction import Compacted, Compactor, CompactPolicy, measured, policy_for
from agentteams.agent.hooks.points import EndReason, HookPoints
from agentteams.agent.journal import Journal
from agentteams.agent.loop import Agent, AgentEvent, AgentSettings, Answer, PermissionAsk, TurnResult
from agentteams.agent.mcp_servers import attach_mcp
from agentteams.agent.memory import Memory, load_memory
from agentteams.agent.permissions import live_changes
from agentteams.agent.permissions.policy import PermissionPolicy, offered_tools, parse_mode, parse_rules
from agentteams.agent.permissions.settings_rules import settings_rules
from agentteams.agent.prompts import Identity, chosen_style, style_switched, styled, system_prompt
from agentteams.agent.session_options import SessionOptions, TurnExtras, command_extras, follow_plan_mode, with_note
from agentteams.agent.side_calls import side_caller
from agentteams.agent.subagent_run import SubagentCalls, SubagentRecord
from agentteams.errors import AgentTeamsError
from agentteams.model.aliases import plan_model, resolve_model
from agentteams.model.pricing import UsageLedger
from agentteams.model.types import ModelClient
from agentteams.settings.agents import TEAMMATE_TOOLS, load_agents
from agentteams.store.api import Store
from agentteams.store.opener import open_store
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.transcripts.reader import Loaded, fork
from agentteams.store.transcripts.writer import Entrypoint, Transcript
from agentteams.tools.base import Tool, ToolContext
from agentteams.tools.registry import agent_tools, all_tools
from agentteams.tools.runtime_hooks import PermissionMode, RuntimeHooks

if TYPE_CHECKING:
    from agentteams.agent.hooks.spec import HookCommand
    from agentteams.agent.structured import StructuredOutput
    from agentteams.agent.subagents import Subagents
    from agentteams.settings.output_styles import OutputStyle


__all__ = ["RESTRICTED_AWAY", "Session", "SessionOptions", "TurnExtras", "command_extras"]  # the options live beside

# the tools --restricted takes away: those that run commands (and their background shells) and WebFetch
RESTRICTED_AWAY = frozenset({"Bash", "BashOutput", "KillShell", "WebFetch"})


class Session:
    """Builds and holds the main agent; `run(prompt)` plays one user turn."""

    on_subagent_event: Callable[[AgentEvent], None] | None = None  # a subagent's events (run/subagent_lines.py)
    structured: StructuredOutput | None = None  # --json-schema's tool and value (agent/structured.py: attach)
    checkpoints: FileCheckpoints | None = None  # an SDK program's file checkpoints, when it enabled them
    style_note: str | None = None  # /output-style's change mid-conversation, told with the next prompt

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
        self.store: Store = store or open_store(self.layout)  # the team's shared state (AGENTTEAMS_STORE)
        self.model, self.plan_model = resolve_model(options.model), plan_model(options.model)  # opusplan: 2 models
        self.client = client
        self.ledger = UsageLedger()
        self._outer = on_event or (lambda _e: None)
        self._secrets = secrets
        self._cleared_note: str | None = None  # what the first turn after /clear is told
        self.transcript = self._open_transcript(options)
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
            additional_dirs=[
                *(Path(d).expanduser() for d in settings.permissions.additional_directories), *options.add_dirs
            ],
            confined=options.restricted,
        )  # fmt: skip
        # looked up per answer, not bound now: /clear and /resume change the transcript
        self.policy.on_remember = lambda *answer: self.transcript.remember(*answer)  # noqa: PLW0108
        self.hooks = HookPoints.build(
            settings, cwd=options.cwd, session_id=options.session_id, transcript_path=str(self.transcript.path),
            permission_mode=self._mode, secrets=secrets,
        )  # fmt: skip
        self.hooks.asks_person = me is None
        self.ctx.hooks = RuntimeHooks(
            model=self.model, permission_mode=self._mode, run_subagent=self._run_subagent,
            ask_model=side_caller(client, self.ledger, self.name),  # WebFetch's small model, WebSearch's search
            approve_plan=self._approve_plan if me is None else None,  # a teammate's plan goes to its lead
            task_created=self.hooks.task_created, task_completed=self.hooks.task_completed,
            file_changing=self._start_checkpoints(lead=me is None),
        )  # fmt: skip
        self.agents = options.agents or load_agents(options.cwd, self.layout.root, options.settings.sources)
        if me is None:  # a teammate's lead has reported the files already
            for problem in self.agents.problems:
                diagnostics.warning("%s", problem)
        self.custom_type = own_type(self.agents, me)  # a teammate started as an agent type with a tool list
        self.tools: list[Tool] = offered_tools(all_tools(self.agents, options.builtin_tools), mode, disallowed)
        if options.restricted:  # as Claude Code's --restricted: nothing that runs commands or code, no WebFetch
            self.tools = [t for t in self.tools if t.name not in RESTRICTED_AWAY]
        if self.custom_type is not None:  # enforced: a tool left out here cannot run, whatever the model sends
            keep = (*TEAMMATE_TOOLS, *(("ExitPlanMode",) if options.plan_mode_required else ()))
            self.tools = agent_tools(self.custom_type, self.tools, keep)
        system = self._styled_prompt(options, me)
        # read once per session: the memory block must not change under the cached prefix mid-conversation
        self.memory: Memory = load_memory(options.cwd, self.layout.root)
        self.context = self.memory.prompt_text()
        started = self.hooks.session_start("resume" if options.resume else "startup", self.model)  # its context
        if started:  # joins the memory block
            self.context = "\n\n".join([*([self.context] if self.context else []), *started])
        restriction = self.custom_type.restriction() if self.custom_type else None
        max_turns = options.max_turns or (self.custom_type.max_turns if self.custom_type else None)
        agent_settings = AgentSettings(
            self.model, system, max_turns, name=self.name, context=self.context, restriction=restriction
        )
        self.agent = Agent(
            client, self.tools, self.ctx, self.policy, agent_settings, on_event=self._event_for(self.name), ask=ask,
            hooks=self.hooks if self.hooks.runner is not None else None,
        )  # fmt: skip
        self.compactor = Compactor(self.agent, lambda: self.transcript, self.hooks, self.compact_policy)
        # before each call: the model for the mode (opusplan), then compaction (a teammate and a -p run compact too)
        follow_plan_mode(self.agent, self._mode, lambda: (self.model, self.plan_model), then=self.compactor.auto)
        self.mcp = attach_mcp(self)  # started, not waited for: a slow server never holds up the first request
        if (budget := options.max_budget_usd) is not None:
            self.agent.over_budget = lambda: self.ledger.total().cost_usd >= budget
        if options.resume is not None:
            self.adopt(options.resume)

    @functools.cached_property
    def subagents(self) -> Subagents:
        """The subagents its Task calls start (their module loaded then), within claude's spawn caps."""
        from agentteams.agent.subagents import SubagentKit, Subagents
        from agentteams.tools.spawn_limits import SpawnLimits

        return Subagents(SubagentKit(
            self.client, self.policy, self.store, self.agents, self.options.cwd, lambda: self.options.session_id,
            self.options.interactive, self.options.max_turns, self._secrets, lambda: self.model, lambda: self.context,
            lambda: list(self.agent.tools.values()), lambda: self.transcript, self.subagent_calls, self.hooks, self.ctx,
            self._mode, self._event_for,
        ), SpawnLimits.from_env(os.environ))  # fmt: skip

    def _run_subagent(self, kind: str, prompt: str, model: str | None) -> tuple[str, dict[str, Any]]:
        """A Task call of the main agent's (depth 0): its subagent's final text and the call's structured result."""
        return self.subagents.run(kind, prompt, model, self.agent, 0)

    @functools.cached_property
    def subagent_calls(self) -> SubagentCalls:
        """The maker of the ids of the subagents its Task calls start."""
        return SubagentCalls()

    def adopt(self, loaded: Loaded) -> None:
        """Go on with a session read back from its transcript: its conversation and its "always" answers (the
        transcript object already appends to its file, or to the fork's copy)."""
        self.agent.messages = list(loaded.messages)
        self.ctx.todos.restore(self.agent.messages)  # the todo list as its last TodoWrite left it
        self.agent.context_tokens, self.agent.context_measured_at = measured(loaded.entries, self.agent.messages)
        remember, self.policy.on_remember = self.policy.on_remember, None  # already in the file
        for allow in loaded.allowed:
            if isinstance(tool := allow.get("tool"), str):
                self.policy.remember(tool, allow.get("target"), allow.get("kind"))
        self.policy.on_remember = remember

    def run(self, prompt: str, extras: TurnExtras | None = None) -> TurnResult:
        """One user turn; `extras` (a custom command's front matter) hold for that turn only."""
        if self._cleared_note:  # the first turn after /clear: the lead still leads its team
            prompt, self._cleared_note = f"{self._cleared_note}\n\n{prompt}", None
        if self.style_note:  # /output-style changed the style mid-conversation: said before this prompt
            extras, self.style_note = with_note(extras, self.style_note), None
        content = extras.content(prompt) if extras is not None else prompt
        if extras is None or not (extras.model or extras.allowed_tools):
            return self.agent.run(content)
        kept_model, kept_rules = self.model, self.policy.allowed
        used = self.set_model(extras.model) if extras.model else None
        self.policy.allowed = [*kept_rules, *parse_rules(extras.allowed_tools, extras.origin)]
        try:
            return self.agent.run(content)
        finally:
            self.policy.allowed = kept_rules
            if used is not None and self.model == used:  # unless /model chose another meanwhile
                self.set_model(kept_model)

    def _styled_prompt(self, options: SessionOptions, me: Identity | None) -> str:
        """The system prompt with the output style `outputStyle` names in it (kept for /output-style)."""

        def prompt_for(style: OutputStyle | None) -> str:
            return system_prompt(
                cwd=str(options.cwd), model=self.model, date=date.today().isoformat(), team_role=options.team_role,
                identity=me, append=options.append_system_prompt, style=style,
                base=self.custom_type.prompt if self.custom_type else None,  # a built-in type has none: ours
            ) if options.system_prompt is None else styled("\n\n".join(filter(None, [
                options.system_prompt, options.append_system_prompt])), style)  # fmt: skip

        self._prompt_for = prompt_for
        self.output_style = chosen_style(options.settings.merged, options.cwd, self.layout.root)
        return prompt_for(self.output_style)

    def set_output_style(self, style: OutputStyle | None) -> None:
        """/output-style: before the conversation's first request, its system prompt has the style; later, the
        prompt stays (its cached prefix holds) and the model is told of the change with the next prompt."""
        self.output_style = style
        if self.agent.messages:
            self.style_note = style_switched(style)
        else:
            self.agent.settings.system = self._prompt_for(style)

    def compact(self, instructions: str = "") -> Compacted:
        """/compact: the conversation replaced by its summary (CompactError when it cannot be)."""
        return self.compactor.compact(instructions)

    def compact_policy(self) -> CompactPolicy:
        """For the model in use now; `autoCompactEnabled: false` in the settings turns automatic compaction off."""
        auto = self.options.settings.merged.get("autoCompactEnabled")
        return policy_for(self.model, self.agent.settings.max_tokens, auto_setting=auto)

    def context_use(self) -> tuple[int, int]:
        """(tokens the conversation takes now, the model's window): what `status` shows as a percentage."""
        return self.compactor.context_tokens(), self.compact_policy().window

    def add_hooks(self, hooks: list[HookCommand]) -> None:
        """An SDK program's hooks (its `initialize`), fired from the next event on beside the settings' own."""
        from agentteams.agent.hooks.runner import HookRunner

        self.hooks.add(hooks, lambda: HookRunner(
            self.options.settings, cwd=self.options.cwd, session_id=self.options.session_id,
            transcript_path=str(self.transcript.path), permission_mode=self._mode, secrets=self._secrets))  # fmt: skip
        self.agent.hooks = self.hooks

    def set_model(self, name: str) -> str:
        """Use `name` (alias or full id; UnknownModelError otherwise) from the next request on: this agent, its
        subagents and teammates spawned later. The system prompt names the model, so it is rebuilt; the full id."""
        model, self.plan_model = resolve_model(name), plan_model(name)
        settings = self.agent.settings  # its environment block names the model: that line changes, nothing else
        settings.system = settings.system.replace(f"- model: {self.model}\n", f"- model: {model}\n", 1)
        self.model = settings.model = self.ctx.hooks.model = model
        return model

    def clear(self) -> str:
        """A fresh conversation, as Claude Code's /clear: no history, a new session id and transcript, memory read
        again, SessionEnd and SessionStart hooks; tools, rules, model, team and the usage so far stay. The new id."""
        new_id = str(uuid.uuid4())
        self.options.session_id = new_id
        self.ctx.session_id = new_id
        self.ctx.plan_file = self.layout.plan_file(new_id)
        self.transcript = self._new_transcript(new_id)
        self.memory = load_memory(self.options.cwd, self.layout.root)
        started = self.hooks.cleared(new_id, str(self.transcript.path), self.model)
        self.context = "\n\n".join(t for t in [self.memory.prompt_text(), *started] if t) or None
        self.agent.settings.context = self.context
        self.agent.messages = []
        self.ctx.todos.replace(())  # the todo list belongs to the conversation
        self.agent.context_tokens = self.agent.context_measured_at = 0
        team = self.ctx.team_name
        if team and self.ctx.is_lead:
            with contextlib.suppress(AgentTeamsError):
                names = [m.name for m in self.store.teams.read(team).members if m.name != LEAD_NAME]
                self._cleared_note = f"[team] The conversation was cleared. You still lead team {team} " + (
                    f"(teammates: {', '.join(names)})." if names else "(no teammates right now)."
                )
        return new_id

    def switch(self, loaded: Loaded) -> str:
        """Go on with another session of this cwd (/resume): its file, id and conversation; SessionEnd and
        SessionStart ("resume") hooks as for /clear. The session id."""
        self.options.session_id = self.ctx.session_id = loaded.session_id
        self.ctx.plan_file = self.layout.plan_file(loaded.session_id)
        self.transcript = self._new_transcript(loaded.session_id, loaded.leaf)
        self.transcript.path = loaded.path
        started = self.hooks.cleared(loaded.session_id, str(loaded.path), self.model, source="resume")
        self.context = "\n\n".join(t for t in [self.memory.prompt_text(), *started] if t) or None
        self.agent.settings.context = self.context
        self.adopt(loaded)
        return loaded.session_id

    def _new_transcript(self, session_id: str, leaf: str | None = None) -> Transcript:
        path = self.layout.transcript_file(str(self.options.cwd), session_id)
        entrypoint: Entrypoint = "cli" if self.options.interactive else "sdk-cli"
        return Transcript(path, session_id, cwd=str(self.options.cwd), secrets=self._secrets, entrypoint=entrypoint,
                          leaf=leaf, mirror=self.options.mirror)  # fmt: skip

    def _open_transcript(self, options: SessionOptions) -> Transcript:
        """A new session's file; a resumed one's own (appended to); a fork's copy under its new id."""
        loaded = options.resume
        if loaded is None:
            return self._new_transcript(options.session_id)
        if not options.fork_session:
            options.session_id = loaded.session_id
            transcript = self._new_transcript(loaded.session_id, loaded.leaf)
            transcript.path = loaded.path  # where it was found (another cwd's project, for `-r ID`)
            return transcript
        transcript = self._new_transcript(options.session_id, loaded.leaf)
        fork(loaded, transcript.path, options.session_id)
        return transcript

    def end(self, reason: EndReason = "other") -> None:
        """SessionEnd hooks (once; after any still running); background shells stopped, MCP servers closed."""
        self.ctx.shells.close()
        self.hooks.session_end(reason)
        self.mcp.close()

    def listen(self, fn: Callable[[AgentEvent], None]) -> None:
        """Also send this session's own events to `fn` (after the ones registered before)."""
        prior = self._outer

        def both(event: AgentEvent) -> None:
            prior(event)
            fn(event)

        self._outer = both

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    def _event_for(
        self, agent: str, model_of: Callable[[], str] | None = None, sub: SubagentRecord | None = None
    ) -> Callable[[AgentEvent], None]:
        journal = (
            Journal(lambda: sub.transcript, agent) if sub else Journal(lambda: self.transcript, agent,
                                                                       mode=lambda: self.policy.mode)
        )  # fmt: skip

        def handle(event: AgentEvent) -> None:
            self.transcript.team = self.ctx.team_name  # `agentteams logs` finds a team's transcripts by it
            model = model_of() if model_of else self.model  # a subagent may run on a model of its own
            if sub is not None:
                sub.saw(event)
                event.agent_id = event.agent_id or sub.transcript.agent_id or ""  # whose (a background one: no thread)
            else:  # before anyone hears of a Task call: its subagent's id goes with it
                self.subagent_calls.started(event)
            journal(event, model)
            if self.checkpoints is not None and sub is None and event.kind == "user" and event.uuids:
                self.checkpoints.snapshot(event.uuids[0])  # each prompt of the lead's is a point to rewind to
            if event.kind in ("assistant", "compacted") and event.usage is not None:  # a summary costs too
                self.ledger.record(agent, model, event.usage, event.response.api_ms if event.response else 0)
            if agent == self.name:
                self._outer(event)
            elif self.on_subagent_event is not None:  # a foreground subagent's: stream-json attributes some
                self.on_subagent_event(event)

        return handle

    def _start_checkpoints(self, *, lead: bool) -> Callable[[Path], None] | None:
        """An SDK program's file checkpoints (rewind_files), kept when it enabled them: the lead's only (a teammate
        has no program to ask); what the file tools call before they change a file."""
        dirs = [self.options.cwd, *(self.options.cwd / d for d in self.policy.additional_dirs)]
        self.checkpoints = for_session(dirs, os.environ) if lead else None
        return self.checkpoints.before_change if self.checkpoints else None

    def _mode(self) -> PermissionMode:
        return self.policy.mode

    def switch_mode(self, mode: str) -> str:
        """The lead's permission mode from now on (Shift-Tab, `/permissions mode`): the next tool call obeys it."""
        return live_changes.switch_mode(self.policy, mode, started=self.options.permission_mode)

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
            self.policy.mode = "acceptEdits" if answer in ("always", "accept_edits") else "default"
            return True
        if not self.policy.allows_by_rule("ExitPlanMode", "plan", None):
            return False
        self.policy.mode = "acceptEdits"
        return True
