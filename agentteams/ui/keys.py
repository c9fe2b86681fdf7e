"""The prompt's keys, as Claude Code's: Enter sends; backslash-Enter, Alt-Enter and Shift-Enter (where the terminal
reports it) add a line; Esc stops a turn, Esc Esc clears the line or, at an empty prompt, offers to rewind; Shift-Tab
cycles the permission modes; Ctrl-C clears the line or stops; `@` completes a path."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prompt_toolkit.completion import CompleteEvent, Completer, Completion
    from prompt_toolkit.document import Document
    from prompt_toolkit.key_binding import KeyBindings

DOUBLE_ESC = 0.8  # seconds within which a second Esc makes Esc Esc
KEY_WAIT = 0.05  # seconds an Esc waits for what may follow it (an Alt-key's second byte comes in the same read)
REWIND = "\x00rewind"  # what the prompt returns when Esc Esc asks for the rewind list
# Shift-Enter as terminals report it when asked (xterm's modifyOtherKeys, the kitty / CSI-u form): Alt-Enter's keys
SHIFT_ENTER = ("\x1b[27;2;13~", "\x1b[13;2u")
MAX_FILES = 5000  # files looked at for a name matched anywhere below the working directory
SKIPPED = {".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".ruff_cache", ".pytest_cache"}


@dataclass
class KeyActions:
    """What the keys do beyond editing the line: the REPL's own."""

    cycle_mode: Callable[[], None]
    escape: Callable[[], bool]  # a turn, a command or a question to stop: True when Esc stopped something


def bindings(actions: KeyActions) -> KeyBindings:
    from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.keys import Keys

    for sequence in SHIFT_ENTER:  # prompt_toolkit reads them as a plain Enter: a line would be sent
        ANSI_SEQUENCES[sequence] = (Keys.Escape, Keys.ControlM)
    kb = KeyBindings()
    last_esc = [0.0]

    @kb.add("s-tab")
    def _mode(_event: KeyPressEvent) -> None:
        actions.cycle_mode()

    @kb.add("enter")
    def _send(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\"):  # backslash-Enter: the backslash becomes a new line
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    @kb.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @kb.add("escape")
    def _escape(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.complete_state is not None:  # a completion list open: Esc closes it, as anywhere
            buffer.cancel_completion()
            return
        if actions.escape():
            last_esc[0] = 0.0
            return
        now, before = time.monotonic(), last_esc[0]
        last_esc[0] = now
        if now - before > DOUBLE_ESC:
            return
        last_esc[0] = 0.0
        if buffer.text:  # Esc Esc on a line being typed clears it
            buffer.reset()
        else:
            event.app.exit(result=REWIND)

    @kb.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            # leave nothing of this prompt on screen: its last drawing holds the answer's unfinished line,
            # which the renderer prints for good once the turn has stopped (it was shown twice)
            event.app.erase_when_done = True
            event.app.exit(exception=KeyboardInterrupt())

    return kb


def path_completer(cwd: Path) -> Completer:
    """Completes the word after an `@` with paths: below the directory typed, or files anywhere below `cwd` whose
    name holds what was typed (a thread of its own: a large tree never holds up typing)."""
    from prompt_toolkit.completion import Completer, ThreadedCompleter

    class _Paths(Completer):
        def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
            word = document.get_word_before_cursor(WORD=True)
            if not word.startswith("@"):
                return
            yield from _completions(cwd, word[1:])

    return ThreadedCompleter(_Paths())


def _completions(cwd: Path, typed: str) -> Iterator[Completion]:
    from prompt_toolkit.completion import Completion

    seen: set[str] = set()
    for found in [*_below(cwd, typed), *([] if "/" in typed else _anywhere(cwd, typed))]:
        if found not in seen:
            seen.add(found)
            yield Completion("@" + found, start_position=-len(typed) - 1, display=found)


def _below(cwd: Path, typed: str) -> list[str]:
    """Entries of the directory `typed` names whose names start with its last part (directories end with /)."""
    head, _, part = typed.rpartition("/")
    folder = (cwd / head) if head else cwd
    try:
        names = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir() if p.name.startswith(part))
    except OSError:
        return []
    shown = [n for n in names if part.startswith(".") or not n.startswith(".")]
    return [f"{head}/{n}" if head else n for n in shown][:50]


def _anywhere(cwd: Path, typed: str) -> list[str]:
    """Files below `cwd` (the first MAX_FILES met, caches and hidden folders left out) whose name holds `typed`."""
    import os

    if not typed:
        return []
    low, out, looked = typed.lower(), [], 0
    for root, dirs, files in os.walk(cwd):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.startswith("."))
        for name in sorted(files):
            looked += 1
            if low in name.lower():
                out.append(os.path.relpath(os.path.join(root, name), cwd))
            if looked >= MAX_FILES or len(out) >= 50:
                return out
    return out
