"""Shell commands whose paths Claude Code checks: read-only ones (`cat`, `grep`, `git status`...) run unasked,
and in acceptEdits `mkdir`, `touch`, `rm`, `rmdir`, `mv`, `cp`, `sed`, when their paths are inside the working
directories; the protected directories (`.git`, `.claude`...) no file command or edit may write unasked."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable

FILE_COMMANDS = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"})
# one plain substitution: no `w` (write a file) or `e` (run a command) flag can hide in it
_SED_SCRIPT = re.compile(r"s(/)(?:[^/\\]|\\.)*/(?:[^/\\]|\\.)*/[gpI0-9]*")
# anything that could run or redirect something else: such a line is never taken for a plain file command
_SHELL_MAGIC = re.compile(r"[<>$`*?\[\]{}~\\]")


def is_file_command(segment: str, inside: Callable[[str], bool]) -> bool:
    """Whether one simple command is a file command all of whose paths `inside` accepts."""
    words = _words(segment)
    if not words or words[0] not in FILE_COMMANDS:
        return False
    args = [w for w in words[1:] if not w.startswith("-")]
    if words[0] == "sed":
        if not args or not _SED_SCRIPT.fullmatch(args[0]):
            return False
        args = args[1:]
    return bool(args) and all(inside(os.path.expanduser(a)) for a in args)


# commands that only read (or print) and run without asking when every path they name may be read
READ_ONLY = frozenset({"cat", "head", "tail", "wc", "ls", "grep", "pwd", "echo", "stat", "file", "sort", "diff", "cut",
                       "nl", "tac"})  # fmt: skip
# options that write a file: `git diff --output=f`, `sort -o f` (also inside a cluster: `sort -ro f`)
_WRITES = {"git": re.compile(r"--output"), "sort": re.compile(r"--output|-[A-Za-z]*o")}
# redirections that write nothing anyone reads: dropped before a command is judged
_HARMLESS = re.compile(r"\s(?:[12&]?>\s*/dev/null|2>&1)(?=\s|$)")
READ_ONLY_GIT = frozenset({"status", "log", "diff", "show"})
_NO_PATHS = frozenset({"pwd", "echo"})  # their words are text, not files


def is_read_only_command(segment: str, readable: Callable[[str], bool]) -> bool:
    """Whether one simple command only reads, and every path it names is `readable`."""
    segment = _HARMLESS.sub("", f" {segment}").strip()
    if segment.startswith("echo ") and not re.search(r"[<>`]", segment):
        return True  # it only prints: a `$VAR` in it is expanded, never run (`$(...)` is a command of its own)
    words = _words(segment)
    if not words or (words[0] not in READ_ONLY and words[0] != "git"):
        return False
    writes = _WRITES.get(words[0])
    if writes is not None and any(writes.match(w) for w in words[1:]):
        return False
    if words[0] == "git":  # no global options
        return len(words) > 1 and words[1] in READ_ONLY_GIT
    if words[0] in _NO_PATHS:
        return True
    args = [w for w in words[1:] if not w.startswith("-")]
    if words[0] == "grep":
        args = args[1:]  # the pattern
    return all(readable(os.path.expanduser(a)) for a in args)


def _words(segment: str) -> list[str]:
    """The words of a plain command: none for one that redirects, expands or substitutes anything."""
    if _SHELL_MAGIC.search(segment):
        return []
    try:
        return shlex.split(segment)
    except ValueError:
        return []


# directories no mode but bypassPermissions, and no allow rule, lets a tool write into unasked (as Claude Code)
PROTECTED_DIRS = frozenset({".git", ".claude", ".vscode", ".idea", ".husky"})
PATH_COMMANDS = FILE_COMMANDS | (READ_ONLY - _NO_PATHS)


def named_paths(segment: str) -> tuple[str, list[str]] | None:
    """The program and the paths one simple command names, for the commands whose words are paths (None for any
    other). Expansions are kept as written (`$HOME/x`): the caller cannot know where they point."""
    try:
        words = shlex.split(segment)
    except ValueError:
        words = segment.split()
    if not words or words[0] not in PATH_COMMANDS:
        return None
    args = [w for w in words[1:] if not w.startswith("-")]
    if words[0] in ("sed", "grep"):
        args = args[1:]  # the script, the pattern
    return words[0], args


def unknowable(path: str) -> bool:
    """A path the shell would expand first: where it points is not known before the command runs."""
    return any(c in path for c in "$`") or (path.startswith("~") and not path.startswith(("~/", "~" + os.sep)))
