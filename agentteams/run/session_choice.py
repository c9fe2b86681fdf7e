"""`-c/--continue`, `-r/--resume [ID or words]`, `--fork-session`: which earlier session a run goes on with, the
checks Claude Code makes on these flags, and the start-up picker."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentteams.errors import AgentTeamsError
from agentteams.store.paths import Layout
from agentteams.store.transcripts.reader import Loaded, SessionInfo, find, load, newest, sessions
from agentteams.ui.picker import choice, listing

RESUME_FLAGS = ("-r", "--resume")
PICK = ""  # `-r` given without a value: the picker


@dataclass(frozen=True)
class ResumeFlags:
    cont: bool
    resume: str | None  # None: not given; PICK: the picker; a UUID; other words: the picker, filtered
    fork: bool
    session_id: str | None  # --session-id: with a fork, the new session's id


def optional_value(argv: list[str]) -> list[str]:
    """`-r` may stand alone (as Claude Code's `--resume [value]`): give it an empty value when the next word is an
    option or there is none, so the parser still sees a value."""
    out = []
    for i, word in enumerate(argv):
        out.append(word)
        if word in RESUME_FLAGS and (i + 1 == len(argv) or argv[i + 1].startswith("-")):
            out.append(PICK)
    return out


def is_uuid(text: str) -> bool:
    try:
        return str(uuid.UUID(text)) == text.lower()
    except ValueError:
        return False


def check(flags: ResumeFlags) -> None:
    """Claude Code's rules for these flags, each broken one a single line."""
    if flags.cont and flags.resume is not None:
        raise AgentTeamsError("--continue and --resume cannot be used together: choose one")
    if flags.fork and not (flags.cont or flags.resume is not None):
        raise AgentTeamsError("--fork-session needs --continue or --resume")
    if flags.session_id and (flags.cont or flags.resume is not None) and not flags.fork:
        raise AgentTeamsError("--session-id can be used with --continue or --resume only together with --fork-session")


def resolve(flags: ResumeFlags, layout: Layout, cwd: Path, *, interactive: bool,
            pick: Callable[[list[SessionInfo]], SessionInfo | None] | None = None) -> Loaded | None:  # fmt: skip
    """The session to go on with, read from its transcript; None when none was asked for (or the picker was left).
    A missing session is an error line, as Claude Code's."""
    check(flags)
    if flags.session_id and find(layout, cwd, flags.session_id) is not None:  # never two sessions in one file
        raise AgentTeamsError(
            f"session ID {flags.session_id} is already in use (-r {flags.session_id} goes on with it)"
        )
    if flags.cont:
        info = newest(layout, cwd)
        if info is None:
            raise AgentTeamsError(f"no conversation found to continue in {cwd}")
        return load(info.path)
    if flags.resume is None:
        return None
    if is_uuid(flags.resume):
        path = find(layout, cwd, flags.resume)
        if path is None:
            raise AgentTeamsError(f"no conversation found with session ID {flags.resume}")
        return load(path)
    if not interactive:
        what = f"{flags.resume!r} is not a session ID" if flags.resume else "a session ID is needed"
        raise AgentTeamsError(f"--resume with -p: {what} (the picker is interactive only; -c takes the newest)")
    found = [s for s in sessions(layout, cwd) if flags.resume.lower() in s.first_prompt.lower()]
    if not found:
        raise AgentTeamsError(
            f"no conversation found in {cwd}" + (f" matching {flags.resume!r}" if flags.resume else "")
        )
    chosen = (pick or ask_on_terminal)(found)
    return load(chosen.path) if chosen is not None else None


def ask_on_terminal(found: list[SessionInfo]) -> SessionInfo | None:
    """The start-up picker: the recent sessions of this cwd, newest first; a number (or id) picks, Enter leaves."""
    print("Resume a conversation (newest first):")
    print("\n".join(listing(found[:20])))
    try:
        answer = input("Number or session id (Enter to start a new conversation): ")
    except EOFError:
        return None
    picked = choice(answer, found)
    if answer.strip() and picked is None:
        print(f"agentteams: no session {answer.strip()!r} in the list: starting a new conversation", file=sys.stderr)
    return picked
