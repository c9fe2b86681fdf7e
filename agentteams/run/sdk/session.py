"""`--input-format stream-json` (with or without `-p`, as the Agent SDKs start the CLI): the program's user messages,
each one turn of one conversation answered with stream-json lines and a result; its control requests answered
meanwhile; with `--permission-prompt-tool stdio` the agent's permission questions put to it."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentteams.errors import AgentTeamsError, HookAnswerError, PromptBlocked
from agentteams.model.anthropic_client import ModelAPIError
from agentteams.run import headless
from agentteams.run.sdk import reset, turn_open
from agentteams.run.sdk.asks import ToolAsks
from agentteams.run.sdk.channel import ControlChannel
from agentteams.run.sdk.control import ControlAnswers
from agentteams.run.stream_lines import StreamLines
from agentteams.tools.mcp import program_servers

PROMPT_TOOL_STDIO = "stdio"  # `--permission-prompt-tool stdio`: questions go to the program as `can_use_tool`


@dataclass(frozen=True)
class SdkFlags:
    """The flags that shape a driven session."""

    output_format: str = "stream-json"
    permission_prompt_tool: str | None = None
    partial_messages: bool = False  # `--include-partial-messages`: each raw stream event as a `stream_event` line
    may_bypass: bool = False  # bypassPermissions may be switched to (`set_permission_mode`)
    replay: bool = False  # `--replay-user-messages`: each user message echoed back, marked isReplay
    forward_text: bool = False  # `--forward-subagent-text`: a subagent's text lines too


def user_text(obj: dict[str, Any]) -> str | None:
    """A `user` message's prompt: string content, or its text blocks joined (None for another kind)."""
    message = obj.get("message") if obj.get("type") == "user" else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n\n".join(t for t in texts if t)
    return None


def run(options: Any, flags: SdkFlags, *, teammate_mode: str = "auto", teammate_command: str | None = None) -> int:
    """One conversation over stdin's messages: init, the turn's messages and a result line per message; the exit
    code of the last turn (0 when stdin held no message, as nothing failed)."""
    from agentteams.agent.loop import AgentEvent
    from agentteams.model.aliases import resolve_model
    from agentteams.run import hook_lines
    from agentteams.run.lead_setup import build_lead

    resolve_model(options.model)
    turns: list[Any] = []
    lines = StreamLines(options)
    lines.subagents.forward_text = flags.forward_text
    opener = turn_open.Opener()

    def on_event(event: AgentEvent) -> None:
        opener.flush()  # a background agent's notice begins a turn of its own: its init line first
        for line in [*lines.subagents.turn_began(len(turns), event), *answers.tasks.started(event), *lines(event)]:
            headless.emit(line)

    stdio = flags.permission_prompt_tool == PROMPT_TOOL_STDIO
    if flags.permission_prompt_tool is not None and not stdio:
        raise AgentTeamsError(f"--permission-prompt-tool {flags.permission_prompt_tool}: only stdio is supported")
    # the channel first (started once the lead is built): the lead's questions, a teammate's, and the program's own
    # MCP servers all go through it
    answers = ControlAnswers(options, may_bypass=flags.may_bypass)
    channel = answers.channel = ControlChannel(sys.stdin, headless.emit, answers.answer)
    asks = ToolAsks(channel, may_bypass=answers.may_bypass)
    program_servers.set_relay(lambda server, message: _mcp_answer(channel, server, message))
    stop_hook_lines = hook_lines.start(options, headless.emit)  # from the first: SessionStart runs in build_lead
    parts = build_lead(options, teammate_mode=teammate_mode, teammate_command=teammate_command,
                       on_event=on_event, on_turn_end=lambda r: _ended(r, turns, lines, runtime, options),
                       ask=asks if stdio else None,
                       judge=asks.judge if stdio else None, warm=True, peers="first_request")  # fmt: skip
    runtime, code = parts.runtime, 0
    runtime.session.policy.interactive = stdio  # a question has someone to go to: the program
    runtime.session.agent.settings.stream_events = flags.partial_messages
    runtime.session.on_subagent_event = lambda event: headless.emit_all([*opener.take(), *lines.subagent(event)])
    background = lines.subagents.follow(runtime.session, runtime.hear, headless.emit_all,
                                        lambda: headless.init_line(runtime.session, options))  # fmt: skip
    answers.runtime, asks.session, answers.lines = runtime, runtime.session, lines
    channel.start()
    ended = 0.0  # when the last turn ended
    try:
        # the endpoint among other sessions: once the first request has left, or once the program keeps us waiting
        for message in channel.messages(idle=parts.peers.go if parts.peers is not None else None):
            # what came while the last turn ran goes in as one prompt, a line each, as Claude Code takes it in
            text = user_text(message)
            came = [message]
            if channel.came_before(message, ended):
                came += channel.waiting_since(ended, _joining(message, text))
            prompts = [p for p in map(user_text, came) if p is not None and p.strip()]
            if not prompts:
                continue
            if reset.is_clear(prompts[0]):  # a slash command goes alone (`joins`)
                code = reset.clear(runtime, options, message)
            else:
                echo = reset.origin(message)
                replayed = [_replayed(m, options.session_id) for m in came] if flags.replay else []
                code = _turn(runtime, options, flags.output_format, "\n".join(prompts), turns, echo, opener, replayed)
            ended = time.monotonic()
        background.settle(lambda: headless.wait_settled(runtime))  # stdin ended: as claude, their notices first
    finally:
        parts.close(team_down=True)
        stop_hook_lines()
    return code


def _ended(result: Any, turns: list[Any], lines: StreamLines, runtime: Any, options: Any) -> None:
    """A turn ended: a program's turn's result is its caller's to report; a background agent's notice's turn gets
    its own result line at once, as claude 2.1.332 writes it (numbered, its origin named)."""
    said = lines.subagents.notice_turn_ended()
    if said is None or result is None:
        turns.append(result)
        return
    headless.report([result], runtime.session, options.session_id, "stream-json", 0.0, said)


def _joining(first: dict[str, Any], text: str | None) -> Callable[[dict[str, Any]], bool]:
    """Which waiting messages go into `first`'s turn (run/sdk/reset.py's `joins`)."""
    return lambda other: reset.joins(first, text, other, user_text(other))


def _replayed(message: dict[str, Any], session_id: str) -> dict[str, Any]:
    """A user message of the program's, back as claude 2.1.332 echoes it (`--replay-user-messages`)."""
    import uuid

    from agentteams.store.fs.atomic_json import now_iso

    return {"type": "user", "message": message.get("message"), "session_id": session_id, "parent_tool_use_id": None,
            "uuid": message.get("uuid") or str(uuid.uuid4()), "timestamp": now_iso(), "isReplay": True}  # fmt: skip


def _mcp_answer(channel: ControlChannel, server: str, message: dict[str, Any]) -> dict[str, Any] | None:
    """A message to one of the program's own MCP servers, through it; the server's answer, if it gives one."""
    found = channel.request("mcp_message", {"server_name": server, "message": message}).get("mcp_response")
    return found if isinstance(found, dict) else None


def _turn(runtime: Any, options: Any, output_format: str, prompt: str, turns: list[Any],
          origin: dict[str, Any] | None, opener: turn_open.Opener, replayed: list[dict[str, Any]]) -> int:  # fmt: skip
    runtime.session.mcp.wait_ready()  # the first turn: its servers (started with the session) connected or failed
    runtime.session.mcp.refresh()  # servers the program switched or set since the last turn: as this turn offers them
    opener.hold(headless.init_line(runtime.session, options))
    if replayed:  # after the turn's init line, before its answer, as claude writes them
        opener.flush()
        headless.emit_all(replayed)
    start, before = time.monotonic(), len(turns)
    refused = len(runtime.session.agent.denials)  # the result lists this turn's refused calls, as claude's
    echo = {"origin": origin} if origin else {}  # the host's stamp, back on the turn's result
    compact = headless.compact_instructions(prompt)
    if compact is not None:  # between turns, as in -p: nothing is sent but the summary request
        opener.flush()
        return headless.compacted(runtime.session, compact, options.session_id, output_format, start, echo)
    runtime.submit(*headless.custom_command(prompt, options))
    headless.wait_settled(runtime)
    done = [r for r in turns[before:] if r is not None]
    failed, seconds = runtime.last_error, time.monotonic() - start
    if not done and isinstance(failed, HookAnswerError):  # ended before it began: no init
        opener.drop()
        headless.emit({**turn_open.hook_failed(failed, runtime.session, options.session_id, seconds), **echo})
        return 1
    opener.flush()
    if not done and isinstance(failed, PromptBlocked):
        headless.emit({**turn_open.blocked(failed, runtime.session, options.session_id, seconds), **echo})
        return 0
    if not done and isinstance(
        runtime.last_error, ModelAPIError
    ):  # a result the program reads, and the session goes on
        for line in headless.api_error_lines(runtime.last_error, runtime.session, options.session_id,
                                             time.monotonic() - start):  # fmt: skip
            headless.emit({**line, **echo} if line["type"] == "result" else line)
        return 1
    if not done:
        raise runtime.last_error or AgentTeamsError("the run ended before the model answered")
    return headless.report(done, runtime.session, options.session_id, output_format, time.monotonic() - start, echo,
                           denials_from=refused)  # fmt: skip
