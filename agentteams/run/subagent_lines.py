"""Claude Code's stream-json lines around a subagent (the Task/Agent tool without a team): `task_started` (and, in the
foreground, its prompt as an attributed user line), its tool calls (and its text, when the program asked for it)
attributed to the call, then `task_updated` and `task_notification` with its answer (a background one's as it ends)."""

from __future__ import annotations

import secrets
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentteams.agent.subagent_run import is_subagent_call, new_agent_id
from agentteams.run.task_output import write_task_output

Line = dict[str, Any]


@dataclass
class _Running:
    tool_use_id: str
    task_id: str
    run_id: str
    kind: str
    description: str
    started: float = field(default_factory=time.monotonic)
    tool_uses: int = 0
    tokens: int = 0


class SubagentLines:
    """Turns the lead's Task/Agent calls and its subagents' events into Claude Code's lines. The calls of one answer
    may run side by side, each in a thread of its own: its start, its subagent's answers and its end come from that
    thread, which is how a subagent's events find their call."""

    def __init__(self, session_id: Callable[[], str]) -> None:
        self._session_id = session_id
        self.forward_text = False  # the program's `forwardSubagentText` (initialize)
        self.background = False  # the session runs Task calls in the background by default (agent/background_agents)
        self._running: dict[int, _Running] = {}  # by the thread that runs the call
        self._deferred: dict[int, _Running] = {}  # a call that may go to the background: said once its result says
        self._behind: dict[str, _Running] = {}  # background subagents still at work, by their id
        self._run: BackgroundRun | None = None  # what `follow` made

    def follow(self, session: Any, hear: Callable[[str], None], emit: Callable[[list[Line]], None] | None,
               opening: Callable[[], Line] | None = None) -> BackgroundRun:  # fmt: skip
        """`session`'s Task calls in the background by default, said in these lines (agent/background_agents);
        `opening` makes the line a turn begins with."""
        self._run = BackgroundRun(session, self, hear, emit, opening)
        return self._run

    def turn_began(self, index: int, event: Any) -> list[Line]:
        """An event of the lead's, from the start of a run: whether it begins turn `index` with a notice (then the
        turn's init line, for the program)."""
        return self._run.turn_began(index, event) if self._run is not None else []

    def notice_turn_ended(self) -> dict[str, Any] | None:
        """A driven session's turn ended: if a background agent's notice began it, its result's extra fields (its
        own result line, as claude 2.1.332 writes one at once); None for any other turn."""
        return self._run.notice_turn_ended() if self._run is not None else None

    def main_event(self, event: Any) -> list[Line]:
        """Lines for the lead's own events: a subagent's start and end."""
        if event.kind == "tool_start" and is_subagent_call(event.tool, event.input or {}):
            if self.background and (event.input or {}).get("run_in_background") is not False:
                self._deferred[threading.get_ident()] = self._record(event)
                return []
            return self._started(event)
        deferred = self._deferred.get(threading.get_ident())
        if event.kind == "tool_end" and deferred is not None and event.tool_use_id == deferred.tool_use_id:
            return self._launched(self._deferred.pop(threading.get_ident()), event)
        running = self._running.get(threading.get_ident())
        if event.kind == "tool_end" and running is not None and event.tool_use_id == running.tool_use_id:
            return self._ended(event)
        return []

    def background_ended(self, finished: Any) -> list[Line]:
        """A background subagent ended (agent/background_agents.Finished): its status, its notice, what still runs."""
        running = self._behind.pop(finished.agent_id, None)
        run_id = running.run_id if running is not None else _run_id()
        updated = {"type": "system", "subtype": "task_updated", "task_id": finished.agent_id, "run_id": run_id,
                   "patch": {"status": finished.status, "end_time": int(time.time() * 1000)},
                   **self._stamp()}  # fmt: skip
        notified = {"type": "system", "subtype": "task_notification", "task_id": finished.agent_id, "run_id": run_id,
                    "tool_use_id": finished.tool_use_id, "status": finished.status,
                    "output_file": finished.output_file, "summary": finished.report, "summary_is_report": True,
                    **self._stamp()}  # fmt: skip
        return [updated, notified, self._tasks_line()]

    def _launched(self, running: _Running, event: Any) -> list[Line]:
        """A deferred call's result: in the background (its start said as claude says it), or run to its end."""
        data = event.result.data if event.result is not None else None
        if event.result is None or event.result.is_error:
            return []
        if not (isinstance(data, dict) and data.get("isAsync")):  # it ran in the foreground after all
            self._running[threading.get_ident()] = running
            return [*self._start_lines(running, event), *self._ended(event)]
        running.task_id = str(data.get("agentId") or running.task_id)
        self._behind[running.task_id] = running
        return [self._tasks_line(), self._start_lines(running, event, backgrounded=True)[0]]

    def _tasks_line(self) -> Line:
        tasks = [{"task_id": r.task_id, "run_id": r.run_id, "task_type": "local_agent", "subagent_type": r.kind,
                  "description": r.description} for r in self._behind.values()]  # fmt: skip
        return {"type": "system", "subtype": "background_tasks_changed", "tasks": tasks, **self._stamp()}

    def sub_event(self, event: Any, line: Callable[..., Line]) -> list[Line]:
        """Lines for a subagent's own event: its tool calls and results (its text too when forwarded), attributed."""
        running = self._running.get(threading.get_ident()) or self._behind.get(getattr(event, "agent_id", "") or "")
        if running is None or event.message is None or event.kind not in ("assistant", "tool_results"):
            return []
        if event.kind == "assistant" and event.usage is not None:
            u = event.usage
            running.tokens = (
                u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens + u.output_tokens
            )
        blocks = [b for b in event.message.get("content") or [] if isinstance(b, dict)]
        if event.kind == "assistant":
            running.tool_uses += sum(1 for b in blocks if b.get("type") == "tool_use")
            text = self.forward_text or running.task_id in self._behind  # a background one's text: claude's too
            shown = [b for b in blocks if b.get("type") == "tool_use" or (text and b.get("type") == "text")]
            from agentteams.agent.journal import answer_meta
            from agentteams.store.transcripts.writer import block_message

            meta = answer_meta(event, "")
            return [line("assistant", block_message(b, meta), parent_tool_use_id=running.tool_use_id)
                    for b in shown]  # fmt: skip
        return [line("user", {"role": "user", "content": [b]}, parent_tool_use_id=running.tool_use_id) for b in blocks]

    def _record(self, event: Any) -> _Running:
        args = event.input or {}
        kind, description = str(args.get("subagent_type") or "general-purpose"), str(args.get("description") or "")
        # the id its transcript file has too (the session made it: agent/subagent_run.py)
        return _Running(event.tool_use_id, event.agent_id or new_agent_id(), _run_id(), kind, description)

    def _started(self, event: Any) -> list[Line]:
        running = self._running[threading.get_ident()] = self._record(event)
        return self._start_lines(running, event)

    def _start_lines(self, running: _Running, event: Any, *, backgrounded: bool = False) -> list[Line]:
        prompt, kind, description = str((event.input or {}).get("prompt") or ""), running.kind, running.description
        started = {"type": "system", "subtype": "task_started", "task_id": running.task_id, "run_id": running.run_id,
                   "tool_use_id": running.tool_use_id, "description": description, "subagent_type": kind,
                   "is_backgrounded": backgrounded, "spawn_depth": 1, "task_type": "local_agent", "prompt": prompt,
                   **self._stamp()}  # fmt: skip
        asked = {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": prompt}]},
                 "parent_tool_use_id": running.tool_use_id, "agent_id": running.task_id,
                 "session_id": self._session_id(), "uuid": str(uuid.uuid4()), "timestamp": _now(),
                 "subagent_type": kind, "task_description": description}  # fmt: skip
        return [started, asked]

    def _ended(self, event: Any) -> list[Line]:
        running = self._running.pop(threading.get_ident())
        failed = event.result is None or event.result.is_error
        status = "failed" if failed else "completed"
        answer = "" if event.result is None else event.result.content
        output = write_task_output(self._session_id(), running.task_id, answer)
        updated = {"type": "system", "subtype": "task_updated", "task_id": running.task_id, "run_id": running.run_id,
                   "patch": {"status": status, "end_time": int(time.time() * 1000)}, **self._stamp()}  # fmt: skip
        usage = {"total_tokens": running.tokens, "tool_uses": running.tool_uses,
                 "duration_ms": int((time.monotonic() - running.started) * 1000)}  # fmt: skip
        notified = {"type": "system", "subtype": "task_notification", "task_id": running.task_id,
                    "run_id": running.run_id, "tool_use_id": running.tool_use_id, "status": status,
                    "output_file": str(output), "summary": answer, "usage": usage, **self._stamp()}  # fmt: skip
        return [updated, notified]

    def _stamp(self) -> dict[str, str]:
        return {"uuid": str(uuid.uuid4()), "session_id": self._session_id()}


def _run_id() -> str:
    return f"{int(time.time() * 1000):x}-{secrets.token_hex(4)}"


def _now() -> str:
    from agentteams.store.fs.atomic_json import now_iso

    return now_iso()


class BackgroundRun:
    """A headless run's background subagents (agent/subagent_run.Background): as each ends, its lines for the program
    (`emit`, stream-json only) and its notice for the lead (`hear`: a turn of its own, or mid-turn after a tool
    result); the origin of each turn a notice began, and waiting for them all."""

    def __init__(self, session: Any, lines: SubagentLines, hear: Callable[[str], None],
                 emit: Callable[[list[Line]], None] | None, opening: Callable[[], Line] | None) -> None:  # fmt: skip
        from agentteams.agent.subagent_run import Background  # loaded with these lines already: no new module

        self._lines, self._hear, self._emit, self._opening = lines, hear, emit, opening
        self._run_ids: dict[str, str] = {}
        self.origins: dict[int, dict[str, Any]] = {}  # turn index -> the notice that began it, as claude names it
        self._results = 0  # a driven session's turns so far (its result lines are numbered)
        self._noticed: dict[str, Any] | None = None  # the origin of the turn running now, a notice began it
        self.agents = Background(session, self._delivered)
        lines.background = True

    @property
    def started(self) -> bool:
        return self.agents.agents is not None

    def _delivered(self, finished: Any) -> None:
        said = self._lines.background_ended(finished)
        self._run_ids[finished.agent_id] = str(said[0]["run_id"])
        if self._emit is not None:
            self._emit(said)
        self._hear(finished.notice())

    def turn_began(self, index: int, event: Any) -> list[Line]:
        """An event of the lead's: one that begins turn `index` with a background agent's notice gives it an origin
        (and, for a program, the init line a turn opens with)."""
        message = event.message if event.kind == "user" and self.started else None
        text = message.get("content") if isinstance(message, dict) else None
        if isinstance(text, str) and text.startswith("<task-notification>"):
            agent_id = text.partition("<task-id>")[2].partition("</task-id>")[0]
            run_id = self._run_ids.get(agent_id, agent_id)
            self.origins[index] = self._noticed = {"kind": "task-notification", "producer": "session-task",
                                                   "runId": run_id}  # fmt: skip
            if self._emit is not None and self._opening is not None:  # its turn opens with an init line, as each
                return [self._opening()]
        return []

    def notice_turn_ended(self) -> dict[str, Any] | None:
        origin, self._noticed = self._noticed, None
        self._results += 1
        return None if origin is None else {"origin": origin, "result_index": self._results - 1}

    def settle(self, settled: Callable[[], None]) -> None:
        """`settled` (the lead has nothing left to do), again after each background agent's notice, till none runs."""
        settled()
        while self.agents.running():  # its notice is queued before it stops counting as running
            self.agents.wait_all()
            settled()

    def results(self, done: list[Any], extra: dict[str, Any] | None, output_format: str, echo: Callable[[str], None],
                emit: Callable[[Line], None], summary: Callable[[list[Any]], Line],
                ) -> tuple[list[Any], dict[str, Any] | None]:  # fmt: skip
        """A run whose background agents' notices started turns: each turn before the last said as claude 2.1.332's
        -p says it (text: the answer and a blank line; stream-json: a result line each, numbered; json: nothing,
        its one line is the last's); the turns left to report (the last) and its extra result fields."""
        if not self.started or len(done) < 2:
            return done, extra
        for i, turn in enumerate(done[:-1]):
            if output_format == "text":
                echo(turn.text)
            elif output_format == "stream-json":
                emit({**summary([turn]), "result_index": i, **self._origin(i)})
        return done[-1:], {**(extra or {}), "result_index": len(done) - 1, **self._origin(len(done) - 1)}

    def _origin(self, index: int) -> dict[str, Any]:
        return {"origin": self.origins[index]} if index in self.origins else {}
