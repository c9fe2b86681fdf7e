"""One agent loop: the model answers, permitted tools run, results go back, until the turn ends.

Emits events through a callback and never prints; a tool's failure is an error result, never a crash.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from agentteams import diagnostics
from agentteams.agent import workers
from agentteams.agent.hooks.points import HookPoints
from agentteams.agent.hooks.spec import Permission
from agentteams.agent.tool_batches import run_calls
from agentteams.agent.turn_types import (
    INTERRUPTED_MARK,
    AgentEvent,
    AgentSettings,
    Answer,
    AskedDecision,
    Decision,
    Interrupted,
    PermissionAsk,
    Permissions,
    StopReason,
    TurnResult,
    tool_input_summary,
)
from agentteams.errors import AgentTeamsError
from agentteams.model.types import Block, Message, ModelClient, ModelRequest, ModelResponse, StreamCallbacks, Usage
from agentteams.store.fs.watch import WakeEvent, interrupted_first
from agentteams.tools.base import Tool, ToolContext, ToolInputError, ToolResult

if TYPE_CHECKING:
    from agentteams.agent.structured import StructuredOutput
    from agentteams.model.types import ToolSpec

SEND_WAIT = 0.05  # seconds the turn's prompt waits for its request to leave before it is recorded anyway
INTERRUPT_POLL = 0.05  # seconds between checks of the interrupt flag while the model call runs

__all__ = [  # the boundary types live in turntypes.py; their users import them from here too
    "INTERRUPTED_MARK", "Agent", "AgentEvent", "AgentSettings", "Answer", "Decision", "Interrupted", "PermissionAsk",
    "Permissions", "StopReason", "TurnResult", "tool_input_summary",
]  # fmt: skip


class Agent:
    """Holds one conversation; `run(prompt)` plays one user turn to its end."""

    def __init__(
        self,
        client: ModelClient,
        tools: Sequence[Tool],
        ctx: ToolContext,
        permissions: Permissions,
        settings: AgentSettings,
        on_event: Callable[[AgentEvent], None] | None = None,
        ask: Callable[[PermissionAsk], Answer] | None = None,
        hooks: HookPoints | None = None,
    ) -> None:
        self.client = client
        self.hooks = hooks
        self.tools = {t.name: t for t in tools}
        self.ctx = ctx
        self.permissions = permissions
        self.settings = settings
        self.on_event = on_event or (lambda _e: None)
        self.ask = ask
        self.messages: list[Message] = []
        self.usage = Usage()
        # the context the newest answer measured (all its input and output tokens) and how many messages it
        # covered: what automatic compaction weighs, with an estimate of what came after
        self.context_tokens = 0
        self.context_measured_at = 0
        self.last_usage: Usage | None = None  # the newest answer's own usage (an SDK program's context view shows it)
        self.before_call: Callable[[], None] | None = None  # before each model call: automatic compaction
        # polled at each tool-result boundary the turn goes on from: what arrived meanwhile (messages, a line the
        # person typed), appended after the results so the cached prefix stays valid; the caller knows what it gave
        self.steer: Callable[[], list[Block]] | None = None
        self.over_budget: Callable[[], bool] | None = None  # --max-budget-usd: no model call (nor tool) once it says so
        self.structured: StructuredOutput | None = None  # --json-schema: each turn ends with its value
        self.late_tool: Callable[[str], Tool | str | None] | None = None  # a tool not offered yet (MCP), or why not
        self.offered: list[ToolSpec] | None = None  # the tools as offered, if not its own: a forked teammate's lead's
        self.denials: list[dict[str, Any]] = []  # calls refused (rules, mode, a person, a hook): permission_denials
        self._prompt: AgentEvent | None = None  # the turn's prompt, not yet emitted (run)
        self._emitting = threading.RLock()
        self._asking = threading.Lock()

    def emit(self, event: AgentEvent) -> None:
        """Tell the listeners (transcript, screen, runtime), after the turn's prompt if that still waits: events
        come from the model's thread too (its answer opening, its text)."""
        with self._emitting:
            self._flush_prompt()
            self.on_event(event)

    def _flush_prompt(self) -> None:
        with self._emitting:
            event, self._prompt = self._prompt, None
            if event is not None:
                self.on_event(event)

    def run(self, prompt: str | list[Block]) -> TurnResult:
        self.ctx.interrupt.clear()
        self.messages.append({"role": "user", "content": prompt})
        # recorded (transcript, screen) once the request carrying it is on its way: a woken teammate's message
        # reaches the model ~0.3 ms sooner; whatever else is emitted first waits for it, so the order holds
        self._prompt = AgentEvent("user", message=self.messages[-1])
        try:
            return self._turn()
        finally:
            self._flush_prompt()

    def _turn(self) -> TurnResult:
        usage, calls, text, beside = Usage(), 0, "", 0  # beside: calls past the first of one answer (num_turns)
        stop: StopReason = "end_turn"
        stop_hook_active = False  # a Stop hook already sent this turn on: hooks see it and may let it end
        wanted = self.structured.begin() if self.structured is not None else None
        while True:
            if (limit := self._limit(calls)) is not None:
                stop = limit
                break
            calls += 1
            if self.before_call is not None:
                self.before_call()
            streamed: list[str] = []
            try:
                response = self._call_model(streamed)
            except Interrupted:
                stop = "interrupted"
                text = self._keep_partial("".join(streamed)) or text
                break
            usage.add(response.usage)
            self.usage.add(response.usage)
            self.messages.append({"role": "assistant", "content": response.content})
            self._measured(response.usage)
            self.emit(AgentEvent("assistant", message=self.messages[-1], usage=response.usage, response=response))
            # the answer's last text block, as claude 2.1.332 keeps it (its result, Stop hooks, a subagent's report)
            said = [b.get("text", "") for b in response.content if b.get("type") == "text"]
            text = str(said[-1]) if said else text
            if self.over_budget is not None and self.over_budget():  # as Claude Code: its tools are not run
                stop = "max_budget_usd"
                break
            uses = [b for b in response.content if b.get("type") == "tool_use"]
            if not uses:
                stop = "max_tokens" if response.stop_reason == "max_tokens" else "end_turn"
                if stop == "end_turn" and wanted is not None and wanted.nudge(self):
                    continue
                if stop == "end_turn" and self._stop_hook_feedback(text, stop_hook_active):
                    stop_hook_active = True
                    continue
                break
            beside += len(uses) - 1
            results = self._run_tools(uses)
            self.messages.append({"role": "user", "content": [*results, *self._steered(calls)]})
            self.emit(AgentEvent("tool_results", message=self.messages[-1]))
            if self.hooks is not None and self.hooks.halted is not None:  # `continue: false` (the person was told)
                self.hooks.halted = None
                break
            ended = "exit_requested" if self.ctx.signals.exit_requested else wanted.ended() if wanted else None
            if ended is not None:
                stop = ended
                break
        result = TurnResult(text, stop, calls, usage, beside)
        self.emit(AgentEvent("turn_end", text=text, usage=usage))
        return result

    def _limit(self, calls: int) -> StopReason | None:
        """What ends the turn before another model call: an interrupt, --max-turns, --max-budget-usd."""
        if self.ctx.interrupt.is_set():
            return "interrupted"
        if self.settings.max_turns is not None and calls >= self.settings.max_turns:
            return "max_turns"
        return "max_budget_usd" if self.over_budget is not None and self.over_budget() else None

    def _steered(self, calls: int) -> list[Block]:
        """What to add after the results, asked only when another model call follows (so it reaches the model):
        notices of background commands that ended, then what arrived meanwhile."""
        if self.ctx.signals.exit_requested or self.ctx.interrupt.is_set():
            return []
        if (self.hooks is not None and self.hooks.halted is not None) or (
            self.settings.max_turns is not None and calls >= self.settings.max_turns
        ):
            return []
        notices = self.ctx.shells.notices()
        try:
            return [*notices, *(self.steer() if self.steer is not None else [])]
        except (OSError, AgentTeamsError) as e:  # an inbox it cannot read now: left unread, for later, not a crash
            diagnostics.warning("%s: could not take the messages that came mid-turn: %s", self.settings.name, e)
            return notices

    def _stop_hook_feedback(self, text: str, active: bool) -> bool:
        """Stop (SubagentStop) hooks may keep the turn going: their reason becomes the next user message."""
        reason = self.hooks.stop(text, active) if self.hooks is not None else None
        if reason is None:
            return False
        self.messages.append({"role": "user", "content": [{"type": "text", "text": f"Stop hook feedback:\n{reason}"}]})
        self.emit(AgentEvent("user", message=self.messages[-1]))
        return True

    def _measured(self, usage: Usage) -> None:
        self.last_usage = usage
        self.context_tokens = (usage.input_tokens + usage.cache_creation_input_tokens
                               + usage.cache_read_input_tokens + usage.output_tokens)  # fmt: skip
        self.context_measured_at = len(self.messages)

    def request(self) -> ModelRequest:
        """The request the next model call would send (compaction's summary request starts from it)."""
        return self._request()

    def _request(self) -> ModelRequest:
        specs = self.offered if self.offered is not None else [t.spec() for t in self.tools.values()]
        return ModelRequest(
            model=self.settings.model, system=self.settings.system, tools=specs, messages=self._with_context(),
            max_tokens=self.settings.max_tokens, agent=self.settings.name, turn=True,
        )  # fmt: skip

    def _keep_partial(self, partial: str) -> str:
        """An answer cut off by the person stays in the conversation, as Claude Code keeps it: what was said,
        then a marker saying the person interrupted (the next prompt follows it)."""
        if partial.strip():  # both recorded as they are kept: a resumed session has them too
            self.messages.append({"role": "assistant", "content": [{"type": "text", "text": partial}]})
            self.emit(AgentEvent("assistant", message=self.messages[-1]))
        # the marker even when nothing was said yet, as Claude Code writes it (the API joins adjacent user turns)
        self.messages.append({"role": "user", "content": [{"type": "text", "text": INTERRUPTED_MARK}]})
        self.emit(AgentEvent("user", message=self.messages[-1]))
        return partial

    def _with_context(self) -> list[Message]:
        """The conversation as sent: the context block leads the first user message. Added per request, never
        stored (the transcript keeps what was said); the same every time, so the cached prefix stays valid."""
        context = self.settings.context
        if not context or not self.messages:
            return self.messages
        first = self.messages[0]
        content = first.get("content")
        blocks: list[Block] = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        return [{**first, "content": [{"type": "text", "text": context}, *blocks]}, *self.messages[1:]]

    def _call_model(self, streamed: list[str] | None = None) -> ModelResponse:
        """The model call, in a thread of its own so an interrupt ends the turn at once, even before the first
        byte arrives; an abandoned call stops at its first delta and its answer is dropped (what was streamed
        before is in `streamed`)."""
        diagnostics.stamp("build")
        request, cancelled, opened = self._request(), threading.Event(), threading.Event()
        box: dict[str, Any] = {}
        done = WakeEvent()  # its setting wakes the wait below at once, as does an interrupt's

        def call() -> None:
            try:
                box["response"] = self.client.complete(request, self._callbacks(cancelled, streamed, opened))
            except BaseException as e:  # handed to the agent's thread, which raises it there
                box["error"] = e
            finally:
                opened.set()
                done.set()

        workers.WORKERS.submit(f"{self.settings.name}-model", call)  # a kept thread: no thread start on the path
        if self._prompt is not None:
            # recorded once the request has left (its answer's opening emits it, on the model's thread), or after
            # SEND_WAIT: an answer slow to open leaves the interpreter to this thread while it waits
            opened.wait(SEND_WAIT)
            self._flush_prompt()
        if interrupted_first(done, self.ctx.interrupt, INTERRUPT_POLL):
            cancelled.set()
            raise Interrupted
        if "error" in box:
            raise box["error"]
        response: ModelResponse = box["response"]
        return response

    def _callbacks(
        self, cancelled: threading.Event, streamed: list[str] | None, opened: threading.Event
    ) -> StreamCallbacks:
        def on_text(delta: str) -> None:
            if cancelled.is_set() or self.ctx.interrupt.is_set():
                raise Interrupted
            if streamed is not None:
                streamed.append(delta)
            self.emit(AgentEvent("text", text=delta))

        def on_open() -> None:
            self.emit(AgentEvent("answering"))  # the turn's prompt first, if it still waits
            opened.set()

        def on_event(event: dict[str, Any]) -> None:
            self.emit(AgentEvent("stream_event", input=event))

        return StreamCallbacks(
            on_text=on_text,
            on_open=on_open,
            on_retry=lambda n: self.emit(AgentEvent("retry", text=n.reason)),
            on_event=on_event if self.settings.stream_events else None,
        )

    def _run_tools(self, uses: list[Block]) -> list[Block]:
        """Run the calls in order; neighbouring reads and subagent calls run side by side (agent/tool_batches.py)."""
        return run_calls(uses, self._run_one, self._runs_beside)

    def _runs_beside(self, use: Block) -> bool:
        tool, args = self.tools.get(self._tool_name(use)), use.get("input")
        return tool is not None and tool.runs_beside(args if isinstance(args, dict) else {})

    def _tool_name(self, use: Block) -> str:
        name = str(use.get("name"))  # claude's newer name for Task: one tool, so one set of rules and hooks judges it
        return "Task" if name == "Agent" and name not in self.tools and "Task" in self.tools else name

    def _run_one(self, use: Block) -> Block:
        name, use_id = self._tool_name(use), str(use.get("id"))
        args = use.get("input") if isinstance(use.get("input"), dict) else {}
        assert isinstance(args, dict)
        self.emit(AgentEvent("tool_start", tool=name, tool_use_id=use_id, input=args))
        started = time.monotonic()
        result, args, ran = self._execute(name, args, use_id)
        self.emit(AgentEvent("tool_end", tool=name, tool_use_id=use_id, input=args, result=result))
        extra = None
        if ran and not result.is_error and self.hooks is not None:
            extra = self.hooks.post_tool(name, args, use_id, result, int((time.monotonic() - started) * 1000))
        block: Block = {"type": "tool_result", "tool_use_id": use_id, "content": result.wire(extra)}
        if result.is_error:
            block["is_error"] = True
        return block

    def _execute(self, name: str, args: dict[str, Any], use_id: str) -> tuple[ToolResult, dict[str, Any], bool]:
        """The call's result, the input it ran with (a PreToolUse hook may change it), and whether it ran."""
        tool = self.tools.get(name) or (self.late_tool(name) if self.late_tool else None)  # its server connecting
        if isinstance(tool, str):
            return ToolResult.error(tool), args, False
        if tool is None and self.settings.restriction:
            return ToolResult.error(f"{name} was not run: {self.settings.restriction}."), args, False
        if tool is None:
            known = ", ".join(self.tools)
            return ToolResult.error(f"No tool named {name!r} is available. Available: {known}"), args, False
        if self.ctx.interrupt.is_set():
            return ToolResult.error("Interrupted by the user before this tool ran."), args, False
        if (problem := tool.check(args, self.ctx)) is not None:  # as claude: before its hooks, rules and questions
            return ToolResult.error(problem), args, False
        hook: Permission | None = None
        if self.hooks is not None:  # before the permission check, as in Claude Code
            pre = self.hooks.pre_tool(name, args, use_id)
            if pre.blocked or pre.permission == "deny":
                why = pre.reason or pre.permission_reason or "no reason given"
                self.denials.append({"tool_name": name, "tool_use_id": use_id, "tool_input": args})
                return ToolResult.error(f"PreToolUse:{name} hook error: {why}"), args, False
            args, hook = (pre.updated_input if pre.updated_input is not None else args), pre.permission
        try:
            target = tool.permission_target(args, self.ctx.cwd)
        except ToolInputError as e:
            return ToolResult.error(str(e)), args, False
        refusal, args = self._permission(tool, target, args, hook, use_id)
        if refusal is not None:
            self.denials.append({"tool_name": tool.name, "tool_use_id": use_id, "tool_input": args})
            return refusal, args, False
        try:
            return tool.run(args, self.ctx), args, True
        except ToolInputError as e:
            return ToolResult.error(str(e)), args, True
        except Exception as e:  # a tool bug must not end the session: the model sees what failed
            return ToolResult.error(f"{name} failed: {type(e).__name__}: {e}"), args, True

    def _permission(
        self, tool: Tool, target: str | None, args: dict[str, Any], hook: Permission | None = None, use_id: str = ""
    ) -> tuple[ToolResult | None, dict[str, Any]]:
        """The refusal, if any, and the input the call runs with: the rules and the mode decide; a PreToolUse hook's
        allow skips the question (never a deny or ask rule), its ask asks even where the mode would allow; whoever
        answers a question may change the input (an SDK program's `updatedInput`)."""
        decision = self.permissions.decide(tool.name, tool.kind, target)
        if hook is not None:
            ruled = self.permissions.ruled(tool.name, tool.kind, target)
            if ruled is not None:
                decision = ruled
            elif hook == "allow":
                return None, args
            else:
                decision = AskedDecision("ask", f"a PreToolUse hook asks before {tool.name} runs")
        if decision.behavior == "allow":
            return None, args
        if decision.behavior == "ask" and self.ask is not None:
            if self.hooks is not None:
                self.hooks.notify(f"Claude needs your permission to use {tool.name}")
            asked = PermissionAsk(tool.name, target, args, decision.reason, tool_use_id=use_id)
            with self._asking:  # calls run side by side ask one at a time; once a reply ended the turn, none asks
                if self.ctx.interrupt.is_set():
                    return ToolResult.error("Interrupted by the user before this tool ran."), args
                answer = self.ask(asked)
            if answer == "always":
                self.permissions.remember(tool.name, target)
            elif answer == "accept_edits":
                self.permissions.accept_edits_from_now()
            if answer in ("allow", "always", "accept_edits"):
                return None, asked.updated_input if asked.updated_input is not None else args
            if asked.stop_turn:
                self.ctx.interrupt.set()  # the answer ends the turn too: no further call runs
            said = f" The user said: {asked.feedback}" if asked.feedback else ""
            return ToolResult.error(f"The user denied permission to use {tool.name}.{said}"), args
        return ToolResult.error(f"Permission denied for {tool.name}: {decision.reason}"), args
