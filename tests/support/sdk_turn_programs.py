"""Agent SDK programs about what a turn is: the host's `origin` stamp echoed on its result, prompts sent while a turn
runs joined only when their origins agree, `/clear` resetting the conversation under a new session id, a hook answer
naming another event. Each returns what its author observes, the same with either CLI (sdk_programs.py runs them)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ConversationResetMessage,
    HookMatcher,
    ResultMessage,
    query,
)

from tests.support.sdk_programs import Where, bash_turn, script


def _options(where: Where) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(cli_path=str(where.cli), cwd=str(where.cwd), env=where.env, max_turns=1)


async def _stamped(text: str, origin: Any = None) -> AsyncIterator[dict[str, Any]]:
    stamp = {} if origin is None else {"origin": origin}
    yield {"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": None, **stamp}


def _prompts(where: Where) -> list[str]:
    """The last user message of each main-conversation request but the first (where the real CLI puts its own
    context last): what each later turn sent."""
    sent = []
    for record in [r for r in where.server.requests if r.get("route") == "main"][1:]:
        content = record["body"]["messages"][-1]["content"]
        sent.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
    return sent


async def origin_round_trip(where: Where) -> dict[str, Any]:
    """A human stamp comes back on its turn's result; none, another kind, or a stamp that is not an object does not."""
    origins = []
    async with ClaudeSDKClient(options=_options(where)) as client:
        for origin in ({"kind": "human", "more": 1}, None, {"kind": "task-notification"}, "human"):
            await client.query(_stamped("say it", origin))
            origins += [m.origin async for m in client.receive_response() if isinstance(m, ResultMessage)]
    return {"origins": origins}


async def joined_by_origin(where: Where) -> dict[str, Any]:
    """Prompts sent while the first (slow) turn runs: the waiting ones of one origin kind go in together, a change of
    kind or a slash command starts a turn of its own."""
    stamps: list[Any] = [None, None, {"kind": "human"}, {"kind": "human", "x": 1}, {"kind": "weird"}, None]
    origins: list[Any] = []
    async with ClaudeSDKClient(options=_options(where)) as client:
        await client.query("slow")
        for i, stamp in enumerate(stamps):
            await client.query(_stamped(f"p{i}", stamp))
        async for m in client.receive_messages():
            if isinstance(m, ResultMessage):
                origins.append(m.origin)
                if len(origins) == 5:
                    break
    return {"origins": origins, "prompts": _prompts(where)}


async def clear_resets(where: Where) -> dict[str, Any]:
    """`/clear` between two prompts: a reset notice stamped with the old session, an empty result under a new one,
    and the next prompt sent with no history, in that new session."""
    got: list[list[Any]] = []
    async with ClaudeSDKClient(options=_options(where)) as client:
        for prompt in ("FIRST-PROMPT", "/clear", "two"):
            await client.query(prompt)
            got.append([m async for m in client.receive_response()])
    first, cleared, after = (next(m for m in turn if isinstance(m, ResultMessage)) for turn in got)
    resets = [m for turn in got for m in turn if isinstance(m, ConversationResetMessage)]
    history = ["FIRST-PROMPT" in json.dumps(r["body"]["messages"]) for r in where.server.requests
               if r.get("route") == "main"]  # fmt: skip
    return {
        "resets": [(r.session_id == first.session_id, bool(r.new_conversation_id), bool(r.uuid)) for r in resets],
        "reset_first": type(got[1][0]).__name__,
        "cleared": (cleared.subtype, cleared.is_error, cleared.result, cleared.num_turns, cleared.total_cost_usd),
        "new_session": cleared.session_id != first.session_id and after.session_id == cleared.session_id,
        "history": history,
    }


async def hook_names_another_event(where: Where) -> dict[str, Any]:
    """A hook callback whose answer names another event: on UserPromptSubmit the turn ends in an error result before
    anything else, on PreToolUse the call does not run and the model is told, on PostToolUse the turn goes on."""
    seen: dict[str, Any] = {}
    for event in ("UserPromptSubmit", "PreToolUse", "PostToolUse"):

        async def answer(_payload: Any, _use_id: str | None, _context: Any) -> Any:
            return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "CTX"}}

        options = ClaudeAgentOptions(
            cli_path=str(where.cli),
            cwd=str(where.cwd),
            env=where.env,
            permission_mode="bypassPermissions",
            hooks={event: [HookMatcher(matcher=None, hooks=[answer])]},
        )
        kinds, results = [], []
        try:
            async for m in query(prompt=_stamped(f"go {event}"), options=options):
                kinds.append(type(m).__name__)
                if isinstance(m, ResultMessage):
                    results.append((m.subtype, [e.split(":")[0] for e in m.errors or []][:1]))
        except Exception as e:  # the SDK raises after an error result
            kinds.append(type(e).__name__)
        ran = (where.cwd / "ran.txt").exists()
        (where.cwd / "ran.txt").unlink(missing_ok=True)
        seen[event] = {"kinds": [k for k in kinds if k != "SystemMessage"], "init": "SystemMessage" in kinds,
                       "results": results, "ran": ran}  # fmt: skip
    return seen


PROGRAMS = {"origin round trip": origin_round_trip, "joined by origin": joined_by_origin, "/clear": clear_resets,
            "a hook names another event": hook_names_another_event}  # fmt: skip
SCRIPTS = {
    "origin round trip": script("A", "B", "C", "D"),
    "joined by origin": script({"text": "SLOW", "delay_ms": 2500}, "T2", "T3", "T4", "T5", "T6"),
    "/clear": script("ONE", "TWO"),
    "a hook names another event": script(
        bash_turn("touch ran.txt", "toolu_a"), "DONE-PRE", bash_turn("touch ran.txt", "toolu_b"), "DONE-POST"
    ),
}
