"""`-c/--continue`, `-r/--resume [ID or words]`, `--fork-session`: which earlier session a run goes on with, the
checks Claude Code makes on these flags, and the start-up picker."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentteams.errors import AgentTeamsError
from agentteams.store.paths import Layout

if TYPE_CHECKING:
    from agentteams.store.transcripts.reader import Loaded, SessionInfo

RESUME_FLAGS = ("-r", "--resume")
PICK = ""  # `-r` given without a value: the picker
# Claude Code's options whose value may be left out (`-d`, `--debug hooks`): the next word is theirs unless it is an
# option; `--tmux` takes one only attached (`--tmux=classic`)
OPTIONAL_VALUE = (*RESUME_FLAGS, "-d", "--debug", "--cloud", "--from-pr", "--prompt-suggestions", "--remote-control",
                  "--teleport", "-w", "--worktree")  # fmt: skip
ATTACHED_ONLY = ("--tmux",)


@dataclass(frozen=True)
class ResumeFlags:
    cont: bool
    resume: str | None  # None: not given; PICK: the picker; a UUID; a session's name (-n); other words: the picker,
    # filtered
    fork: bool
    session_id: str | None  # --session-id: with a fork, the new session's id
    at: str | None = None  # --resume-session-at: the entry the resumed conversation ends with
    drops: str | None = None  # --resume-drops-turn: the prompt of the one turn the cut may drop


def optional_value(argv: list[str]) -> list[str]:
    """`-r` may stand alone (as Claude Code's `--resume [value]`, and its other options of an optional value): give
    it an empty value when the next word is an option or there is none, so the parser still sees a value."""
    out: list[str] = []
    for i, word in enumerate(argv):
        if word == "--":  # the rest is the prompt's
            return out + argv[i:]
        out.append(word)
        if word in ATTACHED_ONLY or (word in OPTIONAL_VALUE and (i + 1 == len(argv) or argv[i + 1].startswith("-"))):
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
    if flags.at is not None and flags.resume is None:  # not with -c either, as Claude Code
        raise AgentTeamsError("--resume-session-at requires --resume")
    if flags.drops is not None and flags.at is None:
        raise AgentTeamsError("--resume-drops-turn requires --resume-session-at")


def resolve(flags: ResumeFlags, layout: Layout, cwd: Path, *, interactive: bool,
            pick: Callable[[list[SessionInfo]], SessionInfo | None] | None = None) -> Loaded | None:  # fmt: skip
    """The session to go on with, read from its transcript; None when none was asked for (or the picker was left).
    A missing session is an error line, as Claude Code's."""
    check(flags)
    if not (flags.session_id or flags.cont or flags.resume is not None):
        return None  # a new session: no transcript to read (nor its reader to import, on every cold start)
    from agentteams.store.transcripts.reader import find, load, newest, sessions

    if flags.session_id and find(layout, cwd, flags.session_id) is not None:  # never two sessions in one file
        raise AgentTeamsError(
            f"session ID {flags.session_id} is already in use (-r {flags.session_id} goes on with it)"
        )
    if flags.cont:
        info = newest(layout, cwd, interactive=interactive)
        if info is None:
            raise AgentTeamsError(f"no conversation found to continue in {cwd}")
        return load(info.path)
    if flags.resume is None:
        return None
    if is_uuid(flags.resume):
        path = find(layout, cwd, flags.resume)
        if path is None:
            raise AgentTeamsError(f"no conversation found with session ID {flags.resume}")
        return load(path) if flags.at is None else cut(path, flags.at, flags.drops)
    here = sessions(layout, cwd, limit=1000) if flags.resume else []
    named = [s for s in here if s.title and s.title.lower() == flags.resume.lower()]  # as claude: any case, whole
    if named:  # the newest of that name
        return load(named[0].path) if flags.at is None else cut(named[0].path, flags.at, flags.drops)
    if not interactive:
        what = f"{flags.resume!r} is neither a session ID nor a session's name (-n)" if flags.resume else \
            "a session ID or name is needed"  # fmt: skip
        raise AgentTeamsError(f"--resume with -p: {what} (the picker is interactive only; -c takes the newest)")
    words = flags.resume.lower()
    found = [s for s in here or sessions(layout, cwd) if words in s.first_prompt.lower() or words in s.title.lower()]
    if not found:
        raise AgentTeamsError(
            f"no conversation found in {cwd}" + (f" matching {flags.resume!r}" if flags.resume else "")
        )
    chosen = (pick or ask_on_terminal)(found)
    return load(chosen.path) if chosen is not None else None


def cut(path: Path, at: str, drops: str | None) -> Loaded:
    """The conversation of `path` up to the entry `at` (the later ones stay in the file, off the chain a resume
    goes on from). With `drops`, the cut is refused unless all it leaves out is that prompt's turn: a prompt
    the program never saw (one queued mid-turn, a notification) must not vanish unnoticed."""
    from agentteams.store.transcripts.reader import load

    kept = load(path, at)
    if drops is not None:
        newest = load(path).entries
        ends = next((i for i, e in enumerate(newest) if e.get("uuid") == at), len(newest) - 1)
        why = _not_the_turn(newest[ends + 1 :], drops)
        if why is not None:
            raise AgentTeamsError(f"Resume rejected by --resume-drops-turn: resuming at {at} would discard entries "
                                  f"not attributable to turn {drops}: {why}")  # fmt: skip
    return kept


def _not_the_turn(dropped: list[dict[str, Any]], drops: str) -> str | None:
    """Why the entries a cut leaves out are not the one turn of prompt `drops` (None: they are). What comes
    before the first prompt (context the kept turn ended with) may go; the first prompt must be `drops`'s, and no
    other prompt may follow it."""
    prompts = [(i, e) for i, e in enumerate(dropped) if _is_prompt(e)]
    if not prompts:
        return None
    first_at, first = prompts[0]
    if first.get("uuid") != drops:
        return f"range does not start with the declared turn prompt; {_entry(first_at, first)}"
    if len(prompts) > 1:
        return f"range holds a prompt of another turn; {_entry(*prompts[1])}"
    return None


def _is_prompt(entry: dict[str, Any]) -> bool:
    """A user entry that starts a turn: not a tool's result, a note fed mid-turn, or a compaction's summary."""
    if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isCompactSummary"):
        return False
    content = entry.get("message", {}).get("content") if isinstance(entry.get("message"), dict) else None
    blocks = content if isinstance(content, list) else []
    return not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)


def _entry(index: int, entry: dict[str, Any]) -> str:
    return f"first discarded entry {index} [type={entry.get('type')}, uuid={entry.get('uuid')}]"


def refused_line(why: str, session_id: str) -> dict[str, Any]:
    """The stream-json result a run refused before its first turn ends with (a program reads why from it), as
    Claude Code's: an error, nothing spent."""
    zero = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    return {"type": "result", "subtype": "error_during_execution", "duration_ms": 0, "duration_api_ms": 0,
            "is_error": True, "num_turns": 0, "stop_reason": None, "session_id": session_id, "total_cost_usd": 0,
            "usage": zero, "modelUsage": {}, "permission_denials": [], "uuid": str(uuid.uuid4()),
            "errors": [why]}  # fmt: skip


def ask_on_terminal(found: list[SessionInfo]) -> SessionInfo | None:
    """The start-up picker: the recent sessions of this cwd, newest first; a number (or id) picks, Enter leaves."""
    from agentteams.ui.picker import choice, listing

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
