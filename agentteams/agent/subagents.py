"""Running the subagents a session's Task calls start, within Claude Code's spawn caps (tools/spawn_limits.py): each
nested up to the depth cap with the Task tool of its own, or a fork (`subagent_type: "fork"`) that starts from its
caller's conversation, instructions, tools and model, so that its first request reuses the caller's prompt cache."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from agentteams.agent.agent_types import agent_model, subagent_restriction
from agentteams.agent.hooks.points import HookPoints
from agentteams.agent.loop import Agent, AgentEvent, AgentSettings
from agentteams.agent.permissions.policy import PermissionPolicy
from agentteams.agent.prompts import SUBAGENT_GUIDANCE, system_prompt
from agentteams.agent.subagent_run import TASK_TOOLS, SubagentCall, SubagentCalls, SubagentRecord
from agentteams.model.aliases import resolve_model
from agentteams.model.types import Block, ModelClient
from agentteams.settings.agents import AgentCatalog, AgentDef
from agentteams.store.api import Store
from agentteams.store.transcripts.writer import Transcript
from agentteams.tools.base import Tool, ToolContext
from agentteams.tools.errors import ToolInputError
from agentteams.tools.registry import subagent_tools
from agentteams.tools.runtime_hooks import PermissionMode, RuntimeHooks, SubagentRunner
from agentteams.tools.spawn_limits import FORK_IN_FORK, FORK_TYPE, RunningSubagents, SpawnLimits, depth_refusal

# our words (claude's fork is told the like in its own): what the fork's first message says about the call that
# started it, the parent's other calls in that answer, and the directive it carries out
FORK_STARTED = "This call started a fork, and the fork is you: go on from here with the directive below."
PARENTS_CALL = "This call belongs to the agent that forked you: it runs in that agent's conversation, not yours."
FORK_BRIEF = (
    "You are a fork: a copy of the agent whose conversation is above, started by its last call to carry out one "
    "directive. Do it yourself with your tools (start no agents for it), then answer once with a short report for "
    "the agent that forked you: the report is all it sees."
)

# (subagent name, the model it runs on, its record) -> the listener for its events (the session's journal and screen)
EventsFor = Callable[[str, Callable[[], str], SubagentRecord], Callable[[AgentEvent], None]]


@dataclass
class SubagentKit:
    """What a session lends the subagents its calls start; the getters read what /clear, /model and /resume change."""

    client: ModelClient
    policy: PermissionPolicy
    store: Store
    agents: AgentCatalog
    cwd: Path
    session_id: Callable[[], str]
    interactive: bool
    max_turns: int | None
    secrets: tuple[str | None, ...]
    model: Callable[[], str]
    context: Callable[[], str | None]
    tools: Callable[[], list[Tool]]  # the session's own (its main agent's) tools, that a subagent's are taken from
    transcript: Callable[[], Transcript]
    calls: SubagentCalls
    hooks: HookPoints
    parent_ctx: ToolContext  # the main agent's: its interrupt, shells, side requests and checkpoints are shared
    mode: Callable[[], PermissionMode]
    events_for: EventsFor


class Subagents:
    """The subagents of one session, counted against its concurrency cap while they run."""

    def __init__(self, kit: SubagentKit, limits: SpawnLimits) -> None:
        self.kit = kit
        self.limits = limits
        self.running = RunningSubagents(limits)

    def runner(self, caller: Callable[[], Agent], depth: int = 0, *, forked: bool = False) -> SubagentRunner:
        """The Task tool's runner for the agent `caller` gives, at `depth` (the main agent's is 0)."""
        return lambda kind, prompt, model: self.run(kind, prompt, model, caller(), depth, forked=forked)

    def run(self, kind: str, prompt: str, model: str | None, caller: Agent, depth: int, *,
            forked: bool = False) -> tuple[str, dict[str, Any]]:  # fmt: skip
        """Run one subagent to its final text (and what the Task call's result records about it); a spawn past a
        cap raises ToolInputError with claude's refusal, which the model gets as the call's error."""
        if depth >= self.limits.depth:  # only an agent that kept its caller's tools (a fork) gets this far
            raise ToolInputError(depth_refusal(depth, self.limits.depth))
        if kind == FORK_TYPE and forked:
            raise ToolInputError(FORK_IN_FORK)
        slot = self.running.take()
        if isinstance(slot, str):
            raise ToolInputError(slot)
        try:
            return self._run(kind, prompt, model, caller, depth + 1)
        finally:
            slot()

    def start(self, kind: str, prompt: str, model: str | None, caller: Agent,
              depth: int) -> tuple[SubagentCall, Callable[[], tuple[str, dict[str, Any]]]]:  # fmt: skip
        """A background subagent, checked against the caps now (a refusal raises ToolInputError, as `run`'s): its
        call, and the work that runs it to its end (in a thread of the caller's choosing), its slot held till then."""
        if depth >= self.limits.depth:
            raise ToolInputError(depth_refusal(depth, self.limits.depth))
        slot = self.running.take()
        if isinstance(slot, str):
            raise ToolInputError(slot)
        call = self.kit.calls.take()  # the calling thread's: the Task call's tool_start named its id there
        history = list(caller.messages)  # a fork's: as the call found it (the caller goes on meanwhile)

        def work() -> tuple[str, dict[str, Any]]:
            try:
                return self._run(kind, prompt, model, caller, depth + 1, call, "background", history)
            finally:
                slot()

        return call, work

    def _run(self, kind: str, prompt: str, model: str | None, caller: Agent, depth: int,
             call: SubagentCall | None = None, shape: str = "foreground",
             history: list[dict[str, Any]] | None = None) -> tuple[str, dict[str, Any]]:  # fmt: skip
        kit = self.kit
        history = list(caller.messages) if history is None else history
        fork = kind == FORK_TYPE
        custom = None if fork else kit.agents.get(kind)
        if fork:  # the caller's own model and settings: the request's prefix is the caller's, byte for byte
            sub_model = caller.settings.model
        else:
            sub_model = resolve_model(model) if model else agent_model(custom, kit.model())
        parent = kit.parent_ctx
        ctx = ToolContext(
            cwd=kit.cwd, store=kit.store, session_id=kit.session_id(), agent_name=parent.agent_name,
            team_name=parent.team_name, interrupt=parent.interrupt, shells=parent.shells,
            hooks=RuntimeHooks(
                model=sub_model, permission_mode=kit.mode, task_created=kit.hooks.task_created,
                ask_model=parent.hooks.ask_model, file_changing=parent.hooks.file_changing,
                task_completed=kit.hooks.task_completed,
            ),
        )  # fmt: skip
        call = call or kit.calls.take()
        record = SubagentRecord.open(kit.transcript(), call, kind=kind, built_in=custom is None, model=sub_model,
                                     named=model is not None, interactive=kit.interactive, secrets=kit.secrets,
                                     depth=depth, shape=shape)  # fmt: skip
        answer = ""
        try:  # the agent is built in here too: a record opened is finished whatever fails after it
            sub, opening = self._agent(kind, prompt, caller, depth, call, ctx, record, history, custom, sub_model)
            answer = sub.run(opening).text
        finally:  # finished however it ended, as Claude Code marks a subagent that failed
            detail = record.finish(prompt, answer)
        return answer, detail

    def _agent(self, kind: str, prompt: str, caller: Agent, depth: int, call: SubagentCall, ctx: ToolContext,
               record: SubagentRecord, history: list[dict[str, Any]],
               custom: AgentDef | None, sub_model: str) -> tuple[Agent, str | list[Block]]:  # fmt: skip
        """The subagent and its opening message: a fork of `caller`, or an agent of type `kind` (`custom`'s if one of
        the session's agent files defines it)."""
        kit, fork = self.kit, kind == FORK_TYPE
        name = f"{kit.parent_ctx.agent_name}/{kind}"
        if fork:
            # its caller's name too: a request is shaped (max_tokens, thinking, effort) by whose it is, and the
            # fork's must be its caller's in every part that keys the cache
            settings = dataclasses.replace(caller.settings)
            tools = list(caller.tools.values())  # Task too, whatever the depth: the depth cap refuses it then
        else:
            system = system_prompt(
                cwd=str(kit.cwd), model=sub_model, date=date.today().isoformat(), append=SUBAGENT_GUIDANCE,
                base=custom.prompt if custom else None,
            )  # fmt: skip
            settings = AgentSettings(
                sub_model,
                system,
                (custom.max_turns if custom else None) or kit.max_turns,
                name=name,
                context=kit.context(),
                restriction=subagent_restriction(kind, custom),
            )
            tools = subagent_tools(kind, kit.tools(), custom, nest=self.limits.may_nest(depth))
        sub = Agent(kit.client, tools, ctx, kit.policy, settings,
                    on_event=kit.events_for(name, lambda: sub_model, record),
                    hooks=kit.hooks.for_subagent(call.agent_id, kind, str(record.transcript.path)))  # fmt: skip
        ctx.hooks.run_subagent = self.runner(lambda: sub, depth, forked=fork)
        opening: str | list[Block] = prompt
        if fork:
            sub.messages = history  # its answer that made this call is the newest message
            sub.offered = caller.offered  # a forked teammate's offer its lead's tools
            opening = fork_opening(history[-1] if history else {}, prompt)
        return sub, opening


def fork_opening(answer: dict[str, Any], directive: str) -> list[Block]:
    """A fork's first user message: a result for each call of its caller's newest answer (the API wants one each),
    the one that started it saying so, then the directive. What comes before it is the caller's conversation as it
    was sent, so the caller's cache breakpoint on it is read back."""
    content = answer.get("content") if answer.get("role") == "assistant" else None
    blocks = content if isinstance(content, list) else []
    uses = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
    mine = next((u for u in uses if _starts_this_fork(u, directive)), None)
    results: list[Block] = [{"type": "tool_result", "tool_use_id": u.get("id"),
                             "content": FORK_STARTED if u is mine else PARENTS_CALL} for u in uses]  # fmt: skip
    return [*results, {"type": "text", "text": f"{FORK_BRIEF}\n\nDirective: {directive}"}]


def _starts_this_fork(use: Block, directive: str) -> bool:
    args = use.get("input")
    return (use.get("name") in TASK_TOOLS and isinstance(args, dict) and args.get("subagent_type") == FORK_TYPE
            and args.get("prompt") == directive)  # fmt: skip
