"""A forked teammate (ours; claude 2.1.332 has none): it starts from its lead's conversation, system prompt and tools
as the lead's requests send them, so its first request reads the lead's prompt cache; its identity and its team's
instructions come after that shared prefix, in its opening message."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentteams import diagnostics
from agentteams.agent.prompts import TEAMMATE, Identity, teammate_identity
from agentteams.agent.subagent_run import TASK_TOOLS
from agentteams.agent.subagents import PARENTS_CALL
from agentteams.errors import UnsafePathError
from agentteams.model.types import Block, Message, ToolSpec
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import atomic_write_bytes
from agentteams.tools.spawn_limits import FORK_TYPE

if TYPE_CHECKING:
    from agentteams.agent.loop import Agent

SEED_VAR = "AGENTTEAMS_FORK_SEED"  # "1" in a pane teammate's environment: its seed file waits for it

# our words: who the forked teammate is, given after the lead's conversation it inherits
STARTED_YOU = "This call started you: a teammate forked from this conversation. Your opening message follows."
FORKED_TEAMMATE = (
    "You are not the agent whose conversation is above. It is your team lead's, as it stood when the lead started "
    "you with its last call; you have its context, and its system prompt and tools, but the instructions there for "
    "leading a team are the lead's, not yours: you lead no one and start no teammates. You are {name}, a teammate "
    "of team {team!r}, and your work comes in the message from your lead that follows and in later messages and "
    "tasks, as for any teammate. A tool you see that a teammate has not is refused if you call it."
)


@dataclass(frozen=True)
class ForkSeed:
    """What a forked teammate starts from: its lead's request as the lead's next one would send it."""

    model: str
    system: str
    context: str | None  # the memory block the lead's first user message carries
    tools: list[ToolSpec]
    messages: list[Message]  # the lead's conversation, its answer with the spawning call last

    @classmethod
    def of(cls, lead: Agent) -> ForkSeed:
        request = lead.request()  # the tools as the lead's requests offer them
        return cls(lead.settings.model, lead.settings.system, lead.settings.context, list(request.tools),
                   copy.deepcopy(lead.messages))  # fmt: skip

    def adopt(self, agent: Agent, me: Identity) -> None:
        """Make `agent` (a new teammate's) go on from the lead's conversation: the lead's system prompt, memory block
        and tools offered as the lead's requests offer them, then its opening message. That message is not written
        to its transcript: a resumed teammate goes on from its own conversation, without its lead's."""
        agent.settings.system, agent.settings.context = self.system, self.context
        agent.offered = list(self.tools)
        agent.messages = [*copy.deepcopy(self.messages), {"role": "user", "content": self.opening(me)}]

    def opening(self, me: Identity) -> list[Block]:
        """A result for each call of the lead's newest answer (the API wants one each), the one that started this
        teammate saying so, then who it is and its team's instructions."""
        last = self.messages[-1] if self.messages else {}
        content = last.get("content") if last.get("role") == "assistant" else None
        uses = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"] if isinstance(
            content, list) else []  # fmt: skip
        mine = next((u for u in uses if _starts(u, me.name)), None)
        results: list[Block] = [{"type": "tool_result", "tool_use_id": u.get("id"),
                                 "content": STARTED_YOU if u is mine else PARENTS_CALL} for u in uses]  # fmt: skip
        who = FORKED_TEAMMATE.format(name=me.name, team=me.team)
        return [*results, {"type": "text", "text": "\n\n".join([who, TEAMMATE, teammate_identity(me)])}]

    def write(self, path: Path) -> None:
        """For a pane teammate, which takes it at its start (0600: it holds the lead's conversation)."""
        safe_paths.make_dir(path.parent, parents=True)
        atomic_write_bytes(path, json.dumps(self._json(), ensure_ascii=False).encode("utf-8", "surrogatepass"))

    @classmethod
    def take(cls, path: Path) -> ForkSeed | None:
        """The seed a lead left at `path`, removed once read; None (one warning) if it is missing or unreadable."""
        try:
            raw = safe_paths.read_bytes(path)
            if raw is None:
                raise ValueError("it is missing")
            path.unlink(missing_ok=True)
            data = json.loads(raw.decode("utf-8", "surrogatepass"))
            return cls(str(data["model"]), str(data["system"]), data.get("context"),
                       [ToolSpec(t["name"], t["description"], t["input_schema"]) for t in data["tools"]],
                       list(data["messages"]))  # fmt: skip
        except (OSError, UnsafePathError, ValueError, TypeError, KeyError) as e:
            diagnostics.warning("the forked start %s could not be read (%s): starting as a plain teammate", path, e)
            return None

    def _json(self) -> dict[str, Any]:
        tools = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in self.tools]
        return {"model": self.model, "system": self.system, "context": self.context, "tools": tools,
                "messages": self.messages}  # fmt: skip


def _starts(use: Block, name: str) -> bool:
    args = use.get("input")
    return (use.get("name") in TASK_TOOLS and isinstance(args, dict) and args.get("subagent_type") == FORK_TYPE
            and args.get("name") == name)  # fmt: skip
