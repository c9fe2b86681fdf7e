"""Agent SDK programs that keep and reopen sessions: a truncating resume at a streamed message's uuid
(`--resume-session-at`, `--resume-drops-turn`), and a session store fed by `--session-mirror` and resumed from.
Each returns what its author observes, the same with either CLI (tests/support/sdk_programs.py runs them)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    InMemorySessionStore,
    ResultMessage,
    get_session_messages,
    project_key_for_directory,
    query,
)

from tests.support.sdk_programs import Where, script

PROMPTS = ("Reply with exactly: one", "Reply with exactly: two", "Reply with exactly: three")


@contextlib.contextmanager
def _config_of(where: Where) -> Iterator[None]:
    """The SDK's session readers look in this process's CLAUDE_CONFIG_DIR: the CLI's, for the while."""
    before = os.environ.get("CLAUDE_CONFIG_DIR")
    os.environ["CLAUDE_CONFIG_DIR"] = where.env["CLAUDE_CONFIG_DIR"]
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("CLAUDE_CONFIG_DIR", None)
        else:
            os.environ["CLAUDE_CONFIG_DIR"] = before


def _options(where: Where, **more: Any) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(cli_path=str(where.cli), cwd=str(where.cwd), env=where.env, max_turns=1, **more)


def _prompts(where: Where, session_id: str) -> list[str]:
    with _config_of(where):
        chain = get_session_messages(session_id, directory=str(where.cwd))
    return [m.message["content"] for m in chain if m.type == "user" and isinstance(m.message.get("content"), str)]


def _told(where: Where) -> list[str]:
    """Which of the prompts and answers the model was sent with the last request of the main conversation."""
    bodies = [r["body"] for r in where.server.requests if r.get("route") == "main"]
    text = json.dumps(bodies[-1]["messages"]) if bodies else ""
    return [word for word in (*PROMPTS, "ONE", "TWO") if word in text]


async def _failure(options: ClaudeAgentOptions) -> str:
    """The first line of what a refused run raises ("" when it ran)."""
    try:
        async for _ in query(prompt=PROMPTS[2], options=options):
            pass
    except Exception as e:  # the CLI's own words follow the SDK's "... returned an error result: "
        said = str(e).splitlines()[0]
        return said[min((i for i in (said.find("Resume "), said.find("No message")) if i >= 0), default=0) :]
    return ""


async def truncating_resume(where: Where) -> dict[str, Any]:
    """Two turns with a client; then resumes cut after turn 1's answer (its streamed uuid): refused when the turn
    said to be dropped is not the one that follows, or the uuid is unknown; else a fork without turn 2."""
    streamed: list[list[str]] = [[], []]
    results: list[ResultMessage] = []
    async with ClaudeSDKClient(_options(where)) as client:
        for turn in (0, 1):
            await client.query(PROMPTS[turn])
            async for m in client.receive_response():
                if isinstance(m, AssistantMessage) and m.uuid:
                    streamed[turn].append(m.uuid)
                elif isinstance(m, ResultMessage):
                    results.append(m)
    session_id = results[-1].session_id
    with _config_of(where):
        chain = get_session_messages(session_id, directory=str(where.cwd))
    uuids = [m.uuid for m in chain]
    keep_at = streamed[0][-1]
    turn_2 = next(m.uuid for m in chain if m.type == "user" and m.message.get("content") == PROMPTS[1])
    fork = {"resume": session_id, "fork_session": True, "resume_session_at": keep_at}
    wrong_turn = await _failure(_options(where, **fork, resume_drops_turn=str(uuid.uuid4())))
    unknown = str(uuid.uuid4())
    unknown_at = await _failure(_options(where, resume=session_id, resume_session_at=unknown))
    forked: list[ResultMessage] = []
    async for m in query(prompt=PROMPTS[2], options=_options(where, **fork, resume_drops_turn=turn_2)):
        if isinstance(m, ResultMessage):
            forked.append(m)
    return {
        "streamed_are_the_transcript_s": all(u in uuids for turn in streamed for u in turn) and bool(streamed[1]),
        "wrong_turn": wrong_turn.split(": resuming at")[0] + (" (turn 2 named)" if turn_2 in wrong_turn else ""),
        "unknown_at": unknown_at.replace(unknown, "<uuid>"),
        "forked": [r.is_error for r in forked],
        "new_id": forked[-1].session_id != session_id,
        "forked_prompts": _prompts(where, forked[-1].session_id),
        "source_prompts": _prompts(where, session_id),
        "told": _told(where),
    }


async def session_store(where: Where) -> dict[str, Any]:
    """A session kept in an in-memory store (the CLI mirrors its transcript entries); the local transcript gone,
    the program resumes it from the store alone."""
    store = InMemorySessionStore()
    streamed: list[str] = []
    first: ResultMessage | None = None
    async for m in query(prompt=PROMPTS[0], options=_options(where, session_store=store)):
        if isinstance(m, AssistantMessage) and m.uuid:
            streamed.append(m.uuid)
        elif isinstance(m, ResultMessage):
            first = m
    assert first is not None
    key = {"project_key": project_key_for_directory(str(where.cwd)), "session_id": first.session_id}
    mirrored = await store.load(key)  # type: ignore[arg-type]
    config = Path(where.env["CLAUDE_CONFIG_DIR"])
    on_disk = [json.loads(line) for line in next(config.glob(f"projects/*/{first.session_id}.jsonl")).open()]
    chained = [(e["type"], e["uuid"]) for e in on_disk if e.get("type") in ("user", "assistant")]
    shutil.rmtree(config / "projects")
    resumed: ResultMessage | None = None
    async for m in query(prompt=PROMPTS[1], options=_options(where, session_store=store, resume=first.session_id)):
        if isinstance(m, ResultMessage):
            resumed = m
    kept = [(e["type"], e["uuid"]) for e in mirrored or [] if e.get("type") in ("user", "assistant")]
    return {
        "mirrored_the_transcript": kept == chained and bool(chained),
        "streamed_in_store": bool(streamed) and all(u in {e.get("uuid") for e in mirrored or []} for u in streamed),
        "resumed_same_session": resumed is not None and resumed.session_id == first.session_id,
        "resumed_ok": resumed is not None and not resumed.is_error,
        "told": _told(where),
    }


PROGRAMS = {"truncating resume": truncating_resume, "session store": session_store}
SCRIPTS = {"truncating resume": script("ONE", "TWO", "THREE"), "session store": script("ONE", "TWO")}
