"""Beyond Claude Code: an Agent SDK program whose session leads a team of two (alice and bob), only bob's call asked
of the program's `can_use_tool`, and what the program saw when its result came (the team gone, both files there)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny, ResultMessage, query

from tests.support.sdk_programs import Seen, Where, _collect, _finish, _one, _options
from tests.support.team_script import REQUEST_ID, say, tool, waiting

TEAM = "crew"
ASKER = f"bob@{TEAM}"  # the only teammate whose call needs the program: alice's command is allowed by a rule


@dataclass
class TeamSeen(Seen):
    """What the team program observed, with what held the moment its result arrived."""

    files_at_result: list[str] = field(default_factory=list)
    team_at_result: bool | None = None  # the team's directory still there when the result came
    texts: list[str] = field(default_factory=list)  # the lead's assistant text, in order


async def a_team_behind_the_program(where: Where) -> TeamSeen:
    """The program's session creates team crew with alice and bob; a question goes to `can_use_tool` with the
    asking teammate's `agent_id`, and the program answers by it (bob's Bash allowed, anyone else's denied)."""
    seen = TeamSeen()
    team_dir = Path(where.env["CLAUDE_CONFIG_DIR"]) / "teams" / TEAM

    async def decide(tool_name: str, given: dict[str, Any], context: Any) -> Any:
        seen.asked.append((f"{tool_name} by {context.agent_id}", given))
        if context.agent_id == ASKER:
            return PermissionResultAllow()
        return PermissionResultDeny(message=f"only {ASKER} may")

    async def watched(messages: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for m in messages:
            if isinstance(m, ResultMessage):
                seen.files_at_result = sorted(p.name for p in where.cwd.iterdir() if not p.name.startswith("."))
                seen.team_at_result = team_dir.exists()
            elif type(m).__name__ == "AssistantMessage":
                seen.texts += [b.text for b in m.content if type(b).__name__ == "TextBlock"]
            yield m

    await _collect(watched(query(prompt=_one("build a team"), options=_options(where, can_use_tool=decide))), seen)
    _finish(where, seen)
    return seen


def _shutdown_route(me: str) -> dict[str, Any]:
    approve = {"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True}
    turn = {**tool("SendMessage", to="team-lead", message=approve), "wait_for_last": "shutdown_request"}
    return {"name": f"{me}-shutdown", "match": {"system": f"Your name is {me}", "last_prompt": "shutdown_request"},
            "turns": [turn]}  # fmt: skip


def _worker_route(me: str) -> dict[str, Any]:
    done = tool("SendMessage", to="team-lead", message=f"{me.upper()}-DONE", summary="done")
    turns = [tool("Bash", command=f"touch {me}.txt", description="touch"), done, say("Done.")]
    return {"name": me, "match": {"system": f"Your name is {me}"}, "turns": turns, "idle": "Idle."}


def team_script() -> dict[str, Any]:
    """The lead spawns both, shuts each down once both said they are done, and deletes the team once both are gone."""
    shutdown = {"type": "shutdown_request", "reason": "done"}
    lead = [tool("TeamCreate", team_name=TEAM, description="sdk team"),
            tool("Task", name="alice", team_name=TEAM, description="worker", prompt="Touch alice.txt",
                 allowed_tools=["Bash(touch alice.txt)"]),
            tool("Task", name="bob", team_name=TEAM, description="worker", prompt="Touch bob.txt"),
            say("The team is at work."),
            {**tool("SendMessage", to="alice", message=shutdown), "wait_for": ["ALICE-DONE", "BOB-DONE"]},
            tool("SendMessage", to="bob", message=shutdown),
            waiting("Waiting."),
            {**tool("TeamDelete"), "wait_for": ["Teammate alice shut down", "Teammate bob shut down"]},
            say("TEAM-DONE")]  # fmt: skip
    return {"routes": [_shutdown_route("alice"), _shutdown_route("bob"), _worker_route("alice"), _worker_route("bob"),
                       {"name": "main", "match": {"tools": True}, "turns": lead}]}  # fmt: skip
