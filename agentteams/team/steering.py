"""Mid-turn delivery ("steer"): what reached an agent during its turn becomes the content after the next tool result,
and a message counts as read only once a model request has carried it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agentteams.agent.loop import AgentEvent
from agentteams.agent.session import TurnExtras
from agentteams.model.types import Block
from agentteams.store.api import Mail
from agentteams.store.paths import LEAD_NAME
from agentteams.store.protocol import parse_message
from agentteams.store.records import Envelope
from agentteams.team.delivery import TeamEvent, mark_read, message_block
from agentteams.team.team_hooks import LeadHooks


@dataclass
class Turn:
    """What one lead turn starts from: the person's prompt, teammates' messages, the runtime's notices."""

    prompt: str | None = None
    envs: list[Envelope] | None = None
    notices: list[str] | None = None
    extras: TurnExtras | None = None  # this turn only (a custom command's front matter)


@dataclass
class Carried:
    """Messages in the conversation not yet marked read: marked once a model request carrying them is answered (or
    the turn ends, even failed: redelivering would fail the same way)."""

    mail: Mail
    agent: str
    team: Callable[[], str | None]
    envs: list[Envelope] = field(default_factory=list)

    def heard(self, event: AgentEvent) -> None:
        if event.kind == "assistant":  # the request that carried them has been answered
            self.mark()

    def mark(self) -> None:
        carried, self.envs, team = self.envs, [], self.team()
        if carried and team:  # what fails to be marked is remembered by the caller: never delivered twice
            mark_read(self.mail, team, self.agent, carried)


def take_plain(prompts: list[tuple[str, TurnExtras | None]]) -> list[str]:
    """Remove and return the queued prompts before the first that needs a turn of its own (a custom command's model
    or tools): that one, and every line typed after it, wait for the next turn."""
    n = 0
    while n < len(prompts) and prompts[n][1] is None:
        n += 1
    taken = [p for p, _ in prompts[:n]]
    del prompts[:n]
    return taken


def steerable(unread: list[Envelope], pending: list[Envelope], unmarked: set[tuple[str, ...]]) -> list[Envelope]:
    """The plain messages no request has carried yet. Protocol frames wait for the turn's end: a shutdown request
    (then first, as ever: a real `claude` teammate also answers one between turns, and one approved mid-turn would
    leave its work half done), a plan verdict, a compaction or permission answer (they act between turns)."""
    taken = {e.identity for e in pending} | unmarked
    return [e for e in unread if e.identity not in taken and parse_message(e.text) is None]


def text_block(text: str | None) -> list[Block]:
    return [{"type": "text", "text": text}] if text else []


def teammate_blocks(
    envs: list[Envelope], report: Callable[[TeamEvent], None], me: str, color: str | None
) -> list[Block]:
    """A teammate's messages as one text block of `<teammate-message>` blocks; the UI told who they came from."""
    if envs:
        report(TeamEvent("steered", me, ", ".join(f"a message from {e.sender}" for e in envs), color=color))
    return text_block("\n\n".join(message_block(e) for e in envs))


def lead_blocks(
    hooks: LeadHooks, carried: Carried, notices: list[str], envs: list[Envelope], prompts: list[str]
) -> list[Block]:
    """The lead's news as at a turn's start (the typed lines through UserPromptSubmit hooks), and the person told."""
    carried.envs.extend(envs)
    typed = "\n\n".join(prompts) or None
    text = hooks.turn_text(notices, envs, typed)[0] if typed or envs or notices else None
    if text is not None:
        said = ([f"{len(envs)} teammate message(s)"] if envs else []) + [f"“{p}”" for p in prompts]
        hooks(TeamEvent("steered", LEAD_NAME, ", ".join(said) or "the team's news"))
    return text_block(text)
