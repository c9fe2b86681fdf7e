"""A foreground subagent's own transcript, as Claude Code keeps it: `<session>/subagents/agent-<id>.jsonl` beside
`agent-<id>.meta.json` (the Task call that started it, its type and model), both mirrored for an SDK session store.
Its id is made here, once per Task call, and shared with the stream-json lines about it (run/subagent_lines.py)."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentteams.agent.turn_types import AgentEvent
from agentteams.errors import UnsafePathError
from agentteams.store import write_failures
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import atomic_write_bytes
from agentteams.store.transcripts.writer import Transcript

if TYPE_CHECKING:
    from agentteams.agent.background_agents import BackgroundAgents, Finished

TASK_TOOLS = ("Task", "Agent")  # the tool under both its names (claude renamed Task to Agent)


def is_subagent_call(tool: str, args: dict[str, Any]) -> bool:
    """A Task/Agent call that starts a subagent (with a name and a team it starts a teammate instead)."""
    return tool in TASK_TOOLS and not (args.get("name") and args.get("team_name"))


def new_agent_id() -> str:
    """A subagent's id as Claude Code makes them: `a` and 16 hex digits."""
    return "a" + os.urandom(8).hex()  # what secrets.token_hex does, without its hmac and base64 imports


def subagent_file(session_file: Path, agent_id: str) -> Path:
    """Where a session's subagent writes: the session file's name without `.jsonl` is its directory."""
    return session_file.with_suffix("") / "subagents" / f"agent-{agent_id}.jsonl"


def meta_file(transcript: Path) -> Path:
    return transcript.with_name(transcript.name.removesuffix(".jsonl") + ".meta.json")


@dataclass(frozen=True)
class SubagentCall:
    """The subagent one Task call starts, known from the call's start."""

    agent_id: str
    tool_use_id: str | None
    description: str


class SubagentCalls:
    """The one maker of subagent ids in a session: a Task call of its own agent gets one as it starts (the tool_start
    event carries it on to the stream-json lines), and the subagent that call runs takes it. Calls of one answer may
    run side by side, each in a thread of its own that emits its start and then runs its subagent: kept per thread."""

    def __init__(self) -> None:
        self._pending: dict[int, SubagentCall] = {}

    def started(self, event: AgentEvent) -> None:
        if event.kind == "tool_start" and is_subagent_call(event.tool, event.input):
            description = str(event.input.get("description") or "")
            call = self._pending[threading.get_ident()] = SubagentCall(new_agent_id(), event.tool_use_id, description)
            event.agent_id = call.agent_id
        elif event.kind == "tool_end":  # a call refused before its subagent started leaves nothing behind
            self._pending.pop(threading.get_ident(), None)

    def take(self) -> SubagentCall:
        """The call whose subagent starts now (a runner called with no call seen: a fresh id, no call to name)."""
        return self._pending.pop(threading.get_ident(), None) or SubagentCall(new_agent_id(), None, "")


@dataclass
class SubagentRecord:
    """One subagent's transcript and metadata file, from its start to its end, and what the Task call's result
    records about it (Claude Code's `toolUseResult`)."""

    transcript: Transcript
    meta: dict[str, Any]
    started: float = field(default_factory=time.monotonic)
    tool_uses: int = 0
    usage: dict[str, Any] = field(default_factory=dict)  # the newest answer's

    @classmethod
    def open(cls, parent: Transcript, call: SubagentCall, *, kind: str, built_in: bool, model: str, named: bool,
             interactive: bool, secrets: tuple[str | None, ...], depth: int = 1,
             shape: str = "foreground") -> SubagentRecord:  # fmt: skip
        transcript = Transcript(
            subagent_file(parent.path, call.agent_id), parent.session_id, cwd=parent.cwd, secrets=secrets,
            team=parent.team, entrypoint=parent.entrypoint, mirror=parent.mirror, agent_id=call.agent_id,
            prompt_id=parent.prompt_id,
        )  # fmt: skip
        transcript.attribution = kind
        meta: dict[str, Any] = {"agentType": kind, "isBuiltIn": built_in, "description": call.description}
        if call.tool_use_id:
            meta["toolUseId"] = call.tool_use_id
        meta.update(spawnDepth=depth, requestShape=shape, requestNonInteractive=not interactive, model=model,
                    modelNotNamed=not named)  # fmt: skip
        record = cls(transcript, meta)
        record._save()
        return record

    def saw(self, event: AgentEvent) -> None:
        """One of the subagent's events: its answers' tool calls and usage count towards the call's result."""
        if event.kind == "assistant" and event.message is not None:
            blocks = event.message.get("content") or []
            self.tool_uses += sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use")
            if event.usage is not None:
                self.usage = event.usage.to_json()

    def finish(self, prompt: str, answer: str) -> dict[str, Any]:
        """The metadata marked finished; the Task call's structured result."""
        self.meta["finished"] = True
        self._save()
        tokens = sum(int(self.usage.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens",
                                                          "cache_read_input_tokens", "output_tokens"))  # fmt: skip
        return {"status": "completed", "prompt": prompt, "agentId": self.transcript.agent_id,
                "agentType": self.meta["agentType"], "content": [{"type": "text", "text": answer}],
                "resolvedModel": self.meta["model"], "totalDurationMs": int((time.monotonic() - self.started) * 1000),
                "totalTokens": tokens, "totalToolUseCount": self.tool_uses, "usage": self.usage}  # fmt: skip

    def _save(self) -> None:
        path = meta_file(self.transcript.path)
        try:
            safe_paths.make_dir(path.parent, parents=True)
            atomic_write_bytes(path, json.dumps(self.meta, separators=(",", ":")).encode("utf-8"))
        except (OSError, UnsafePathError) as e:  # the record is lost, never the subagent's work
            write_failures.failed("transcript", path, e)
        if self.transcript.mirror is not None:  # the store keeps the metadata as an entry of the subagent's key
            self.transcript.mirror(self.transcript.path, {"type": "agent_metadata", **self.meta})


class Background:
    """A session's background subagents as its runtime sees them: attached to its main agent's Task calls at the
    start, their module loaded at the first such call (off the start path); `deliver` hears of each as it ends."""

    def __init__(self, session: Any, deliver: Callable[[Finished], None]) -> None:
        self._session, self._deliver = session, deliver
        self.agents: BackgroundAgents | None = None
        session.ctx.hooks.start_subagent = self._start

    def _start(self, kind: str, prompt: str, model: str | None) -> tuple[str, str]:
        from agentteams.agent.background_agents import BackgroundAgents

        if self.agents is None:
            self.agents = BackgroundAgents(self._deliver)
        session = self._session  # its caps checked now: a refusal raises before anything runs
        call, work = session.subagents.start(kind, prompt, model, session.agent, 0)
        output = str(subagent_file(session.transcript.path, call.agent_id))
        self.agents.launch(call.agent_id, call.tool_use_id, call.description, kind, output, work)
        return call.agent_id, output

    def running(self) -> int:
        return 0 if self.agents is None else self.agents.running()

    def wait_all(self, timeout: float | None = None) -> bool:
        return True if self.agents is None else self.agents.wait_all(timeout)
