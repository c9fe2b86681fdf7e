"""Headless runs (`-p`): build the session, run one prompt, print text, json or stream-json."""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from agentteams.errors import AgentTeamsError

FORMATS = ("text", "json", "stream-json")
INPUT_FORMATS = ("text", "stream-json")
SETTLE_SECONDS = 1.0  # a team must stay settled this long before a -p run ends
POLL_SECONDS = 0.1  # how often a team's files are looked at meanwhile


STDIN_WAIT = 3.0  # seconds a silent stdin pipe is waited for, as Claude Code 2.1.332 waits
STDIN_SILENT = (
    "Warning: no stdin data received in {seconds}s, proceeding without it. If piping from a slow command, "
    "redirect stdin explicitly: < /dev/null to skip, or wait longer."
)
NO_INPUT = "input must be provided either through stdin or as a prompt argument when using --print"
BLANK = "input contained only whitespace: give a prompt with text, through stdin or as an argument to --print"


@dataclass(frozen=True)
class Flags:
    """The flags that shape a headless run's input and output, checked together as Claude Code does."""

    print_mode: bool
    output_format: str
    input_format: str
    verbose: bool
    session_id: str | None


def check_flags(flags: Flags) -> None:
    """One clear error for a combination Claude Code refuses (its checks, its order)."""
    if flags.output_format not in FORMATS:
        raise AgentTeamsError(f"--output-format must be one of {', '.join(FORMATS)}, got {flags.output_format!r}")
    if flags.input_format not in INPUT_FORMATS:
        raise AgentTeamsError(f"--input-format must be one of {', '.join(INPUT_FORMATS)}, got {flags.input_format!r}")
    if flags.session_id is not None and not _is_uuid(flags.session_id):
        raise AgentTeamsError(f"invalid session ID {flags.session_id!r}: it must be a valid UUID")
    if flags.print_mode and flags.output_format == "stream-json" and not flags.verbose:
        raise AgentTeamsError("when using --print, --output-format=stream-json requires --verbose")
    if flags.input_format == "stream-json" and flags.output_format != "stream-json":
        raise AgentTeamsError("--input-format=stream-json requires --output-format=stream-json")


def _is_uuid(text: str) -> bool:
    import uuid

    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return len(text) == 36  # the hyphenated form only, as Claude Code writes it in paths


def prompt_text(prompt: str | None) -> str:
    """The -p prompt as Claude Code sends it: the argument, then on the next line whatever a pipe or file on stdin
    holds (as given: neither is trimmed); refused in one line when there is none or only whitespace."""
    text = prompt or ""
    piped = piped_input()
    if piped:
        text = f"{text}\n{piped}" if text else piped
    if not text:
        raise AgentTeamsError(NO_INPUT)
    if not text.strip():
        raise AgentTeamsError(BLANK)
    return text


def piped_input(first_data_wait: float = STDIN_WAIT) -> str:
    """stdin's text when it is not a terminal: read to its end once something came, as Claude Code reads it; a pipe
    that stays silent for `first_data_wait` seconds (a writer that never writes nor closes) is left, with a warning,
    so a script never hangs on it."""
    import select

    stream = sys.stdin
    if stream is None or stream.closed or stream.isatty():
        return ""
    try:
        ready, _, _ = select.select([stream], [], [], first_data_wait)
    except (OSError, ValueError):  # not a selectable descriptor: read it as it is
        ready = [stream]
    if not ready:
        _echo(STDIN_SILENT.format(seconds=int(first_data_wait)), err=True)
        return ""
    return stream.buffer.read().decode("utf-8", errors="replace") if hasattr(stream, "buffer") else stream.read()


_EMIT = threading.Lock()


def emit(obj: dict[str, Any]) -> None:
    """One JSON line on stdout, whole: the turn's thread and stdin's (control replies) both write."""
    line = json.dumps(obj, ensure_ascii=False)
    with _EMIT:
        _echo(line)


def _echo(text: object, *, err: bool = False) -> None:
    """A line, flushed at once (a program reads it as it comes): typer.echo's job, without importing typer (None
    is an empty line, as there)."""
    stream = sys.stderr if err else sys.stdout
    stream.write(("" if text is None else str(text)) + "\n")
    stream.flush()


def run(prompt: str, options: Any, output_format: str, *, teammate_mode: str = "auto",
        teammate_command: str | None = None, seed: Any = None, partial_messages: bool = False,
        forward_text: bool = False) -> int:  # fmt: skip
    """Run `prompt` to the end (a team it starts is shut down first) and print the outcome; the exit code."""
    from agentteams.agent.loop import AgentEvent
    from agentteams.model.aliases import resolve_model
    from agentteams.run.lead_setup import build_lead
    from agentteams.run.stream_lines import StreamLines  # a -p run's: the REPL only checks its flags here

    resolve_model(options.model)  # an unknown alias fails before anything else
    streaming = output_format == "stream-json"
    turns: list[Any] = []

    lines = StreamLines(options)
    lines.subagents.forward_text = forward_text  # --forward-subagent-text: a subagent's text lines too
    marks: dict[str, float] = {}  # when the run's first request left, its answer began, its first text came

    def on_event(event: AgentEvent) -> None:
        if event.kind in ("user", "answering", "text") and event.kind not in marks:
            marks[event.kind] = time.monotonic()
        emit_all(lines.subagents.turn_began(len(turns), event))  # a background agent's notice began a turn?
        if streaming:
            for line in lines(event):
                emit(line)

    if streaming:  # hook runs as lines from the first: SessionStart's runs while the lead is built
        from agentteams.run import hook_lines

        hook_lines.start(options, emit)
    parts = build_lead(options, teammate_mode=teammate_mode, teammate_command=teammate_command,
                       on_event=on_event, on_turn_end=turns.append, seed=seed,
                       peers="first_request")  # fmt: skip  # the prompt's request goes before the endpoint
    prompt = seed.first_prompt(prompt) if seed is not None else prompt  # a team file's (cli/commands/launch.py)
    runtime = parts.runtime
    session = runtime.session
    session.agent.settings.stream_events = streaming and partial_messages
    background = lines.subagents.follow(session, runtime.hear, emit_all if streaming else None,
                                        lambda: init_line(session, options))  # fmt: skip
    if streaming:
        session.on_subagent_event = lambda event: emit_all(lines.subagent(event))
        session.mcp.wait_ready()  # as claude's: the init line tells the MCP servers' state after the wait
        emit(init_line(session, options))
    start = time.monotonic()
    try:
        compact = compact_instructions(prompt)
        if compact is not None:
            return compacted(session, compact, options.session_id, output_format, start)
        runtime.submit(*first_turn(prompt, options, session))
        background.settle(lambda: wait_settled(runtime))  # a background agent's notice is a turn of its own
    finally:
        parts.close(team_down=True)
    from agentteams.store import write_failures

    done = [r for r in turns if r is not None]
    if not done:
        failed = write_failures.summary()  # what the disk refused may be why
        why = "the run ended before the model answered" + (f"; {failed}" if failed else "")
        raise runtime.last_error or AgentTeamsError(why)
    # turns a background agent's notice started are each said before the last, as claude's -p says them
    done, timing = background.results(done, _timing(marks, start) if done[-1].stop_reason in (
        "end_turn", "exit_requested") else None, output_format, lambda t: _echo(f"{t}\n"), emit,
        lambda turns: _summary(turns, session, options.session_id, start))  # fmt: skip
    code = report(done, session, options.session_id, output_format, time.monotonic() - start, timing)
    if (failed := write_failures.summary_unless_last()) is not None:  # the last line says what was not saved
        from agentteams import diagnostics

        diagnostics.warning("%s", failed)
    return code


def _summary(turns: list[Any], session: Any, session_id: str, start: float) -> dict[str, Any]:
    from agentteams.run import result_line

    return result_line.summary(turns, session, session_id, time.monotonic() - start)


def _timing(marks: dict[str, float], start: float) -> dict[str, int]:
    """A successful result's timings, in Claude Code's names: to the first request, the answer's start, its text."""
    ms = {kind: int((at - start) * 1000) for kind, at in marks.items()}
    began = ms.get("answering", ms.get("text", 0))
    return {"ttft_ms": began, "ttft_stream_ms": began, "time_to_request_ms": ms.get("user", 0),
            "first_content_frame_ms": ms.get("text", began)}  # fmt: skip


def _interrupted_how(session: Any) -> tuple[str, str]:
    """An interrupted turn's terminal reason and its diagnostic line, as Claude Code words them: cut off while the
    answer streamed (its marker is the last message) or while tools ran."""
    messages = session.agent.messages
    last = messages[-1] if messages else {}
    from agentteams.run.stream_lines import interrupt_mark

    streaming = interrupt_mark(last)
    content = last.get("content")
    kind = content[-1].get("type", "n/a") if isinstance(content, list) and content and not streaming else "n/a"
    diagnostic = f"[ede_diagnostic] result_type={last.get('role', 'n/a')} last_content_type={kind} stop_reason=null"
    return ("aborted_streaming" if streaming else "aborted_tools"), diagnostic


def emit_all(lines: list[dict[str, Any]]) -> None:
    for line in lines:
        emit(line)


def init_line(session: Any, options: Any) -> dict[str, Any]:
    """The stream-json `system` `init` line that opens each turn (run/init_info.py)."""
    from agentteams.run.init_info import init_line as line

    return line(session, options)


def compact_instructions(prompt: str) -> str | None:
    """The instructions of a `/compact [instructions]` prompt ("" for none); None for any other prompt."""
    word, _, rest = prompt.strip().partition(" ")
    return rest.strip() if word == "/compact" else None


def compacted(session: Any, instructions: str, session_id: str, output_format: str, start: float,
              extra: dict[str, Any] | None = None) -> int:  # fmt: skip
    """`-p "/compact [instructions]"` (with -c or -r: the session resumed) compacts and sends no prompt, as Claude
    Code 2.1.330's -p does: its result is empty, or the refusal ("Not enough messages to compact.", a PreCompact
    hook's block), a successful local command either way (exit 0)."""
    from agentteams.agent.compaction import CompactError
    from agentteams.agent.loop import TurnResult
    from agentteams.model.types import Usage

    try:
        session.compact(instructions)
        said = ""
    except CompactError as e:
        said = str(e)
    done = [TurnResult(said, "end_turn", 0, Usage())]
    return report(done, session, session_id, output_format, time.monotonic() - start, extra)


def first_turn(prompt: str, options: Any, session: Any) -> tuple[str, Any]:
    """(prompt, turn extras) of a -p run: a custom command expanded, then each `@path` attached as the REPL attaches
    it (its module loads only for a prompt that may mention one)."""
    turn = custom_command(prompt, options)
    if "@" not in turn[0]:
        return turn
    from agentteams.agent.typed_input import with_mentions

    return with_mentions(*turn, session)


def custom_command(prompt: str, options: Any) -> tuple[str, Any]:
    """(prompt, turn extras): a `/name args` prompt naming one of the session's commands (its files', its plugins')
    becomes its expanded body with its front matter, as Claude Code's -p does; anything else is sent as given
    (commands are read only for a leading /)."""
    if not prompt.lstrip().startswith("/"):
        return prompt, None
    from agentteams.agent.session import command_extras
    from agentteams.run.init_info import session_commands
    from agentteams.settings.commands import invocation

    found = invocation(prompt, session_commands(options))
    if found is None:
        return prompt, None
    command, args = found
    return command.prompt(args), command_extras(command)


def wait_settled(runtime: Any) -> None:
    """Until nothing will happen without the user. With no team, that is as soon as the lead is idle. Teammates at
    work start further turns with their messages, and settled must hold for a moment, since a teammate that just
    went idle may be claiming its next task; their files are looked at every POLL_SECONDS, sleeping in between."""
    quiet_since: float | None = None
    while True:
        runtime.wait_idle()  # a real wait: it returns when no turn runs and nothing is queued
        if not runtime.team and not runtime.members():
            return
        now = time.monotonic()
        if not runtime.settled():
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since >= SETTLE_SECONDS:
            return
        runtime.wait_change(POLL_SECONDS)


def report(done: list[Any], session: Any, session_id: str, output_format: str, seconds: float,
           extra: dict[str, Any] | None = None, *, denials_from: int = 0) -> int:  # fmt: skip
    """Print the last turn's outcome as text, json (one line, as Claude Code) or a stream-json result line (`extra`
    fields added; the calls refused from the `denials_from`th on); the exit code."""
    from agentteams.run import result_line

    result = done[-1]
    summary = result_line.summary(done, session, session_id, seconds, denials_from)
    if result.stop_reason == "max_budget_usd":  # as Claude Code words it
        summary["errors"] = [f"Reached maximum budget (${result_line.budget_text(session.options.max_budget_usd)})"]
    elif result.stop_reason == "max_turns":
        summary["errors"] = [f"Reached maximum number of turns ({session.options.max_turns})"]
    elif result.stop_reason == "interrupted":
        summary["terminal_reason"], diagnostic = _interrupted_how(session)
        summary["errors"] = [diagnostic]
    if session.structured is not None:  # --json-schema: the value (its JSON the result), or why there is none
        summary.update(session.structured.fields(result.stop_reason))
    summary.update(extra or {})
    if output_format == "text":
        said = result_line.text_error(summary, session)
        if said is not None:  # Claude Code's words on stdout, in place of the answer (no newline after them)
            sys.stdout.write(said)
            sys.stdout.flush()
        else:
            _echo(summary.get("result", ""))
        if summary["subtype"] != "success" and said is None:
            why = summary["errors"][0] if "errors" in summary else f"the run ended early ({result.stop_reason})"
            _echo(f"agentteams: error: {why}", err=True)
    else:
        emit(summary)  # json and stream-json alike: one line
    return 0 if summary["subtype"] == "success" else 1


def api_error_lines(error: Any, session: Any, session_id: str, seconds: float) -> list[dict[str, Any]]:
    """The stream-json lines of a turn the API refused for good, as Claude Code writes them: an answer of its own
    saying so, and a `success` result that is an error, with the API's status and error type."""
    import uuid

    from agentteams.store.fs.atomic_json import now_iso

    total = session.ledger.total()
    status, kind = getattr(error, "status", None), getattr(error, "error_type", None)
    said = f"API Error: {status} {error.api_message}" if status and getattr(error, "api_message", "") else f"{error}"
    said = said if said.startswith("API Error") else f"API Error: {said}"
    api = {"api_error_status": status, "api_error_type": kind}
    zero = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    answer = {"id": str(uuid.uuid4()), "type": "message", "role": "assistant", "model": "<synthetic>",
              "content": [{"type": "text", "text": said}], "stop_reason": "stop_sequence", "stop_sequence": "",
              "usage": zero}  # fmt: skip
    return [
        {"type": "assistant", "message": answer, "parent_tool_use_id": None, "session_id": session_id,
         "uuid": str(uuid.uuid4()), "timestamp": now_iso(), "error": "unknown", "is_api_error_message": True, **api},
        {"type": "result", "subtype": "success", "is_error": True, "result": said, "session_id": session_id,
         "num_turns": 1, "duration_ms": int(seconds * 1000), "duration_api_ms": total.api_ms,
         "total_cost_usd": round(total.cost_usd, 6), "usage": total.usage.to_json(), "modelUsage": model_usage(session),
         "stop_reason": "stop_sequence", "terminal_reason": "api_error", **api, "permission_denials": [],
         "uuid": str(uuid.uuid4())},
    ]  # fmt: skip


def model_usage(session: Any) -> dict[str, dict[str, Any]]:
    from agentteams.run.result_line import model_usage as per_model

    return per_model(session)


def max_budget(raw: str | None) -> float | None:
    """`--max-budget-usd`: a number greater than 0 (Claude Code's rule and words), else one clear error."""
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise AgentTeamsError("--max-budget-usd must be a number greater than 0")
    return value


def budget_text(value: float | None) -> str:
    from agentteams.run.result_line import budget_text as text

    return text(value)
