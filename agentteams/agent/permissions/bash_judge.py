"""Whether a Bash command line may run, judged from what the shell will do with it (shell_syntax): every part
allowed by a rule or only reading, nothing written or expanded where the rules cannot see, and the protected
places never written unasked. What cannot be judged is asked, never allowed."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from agentteams.agent.permissions.path_commands import (
    NOWHERE,
    is_file_command,
    protected_reason,
    read_paths,
    writes_by_option,
    written_paths,
)
from agentteams.agent.permissions.shell_commands import WRAPPERS, ShellLine, SimpleCommand, Word
from agentteams.agent.permissions.shell_syntax import read_line

# wrappers the read-only check sees through (`timeout 5 cat f` only reads); a rule also sees through
# `command` and `xargs` (`Bash(touch:*)` allows `echo f | xargs touch`), as Claude Code
QUIET_WRAPPERS = frozenset({"timeout", "time", "nice", "nohup", "stdbuf"})
RULE_WRAPPERS = QUIET_WRAPPERS | {"command", "xargs"}


@lru_cache(maxsize=256)
def line_of(command: str, cwd: str) -> ShellLine:
    """A command line read once per decision (a decision asks about it for each rule)."""
    return read_line(command, cwd)


@dataclass(frozen=True)
class Places:
    """Where the session works: its directory, the working directories (links resolved), its home, and which
    paths the rules let it read."""

    cwd: str
    roots: tuple[str, ...]
    home: str
    readable: Callable[[str], bool]
    editable: Callable[[str], bool] = lambda _path: False  # an Edit allow rule names it

    def inside(self, path: str) -> bool:
        real = os.path.realpath(path)
        return any(os.path.commonpath([real, r]) == r for r in self.roots)

    def root_of(self, path: str) -> str:
        return next((r for r in self.roots if os.path.commonpath([path, r]) == r), "/")


def chains(line: ShellLine) -> Iterator[list[SimpleCommand]]:
    """Each command with the commands its wrappers run (`timeout 5 nice rm x` is one chain of three)."""
    chain: list[SimpleCommand] = []
    for command in line.commands:
        if chain and command.via in WRAPPERS:
            chain.append(command)
            continue
        if chain:
            yield chain
        chain = [command]
    if chain:
        yield chain


def resolved(word: Word, command: SimpleCommand, places: Places) -> list[str] | None:
    """Where a path word points (from the session's directory and, after a `cd`, from the command's too);
    None when that is not known before the line runs."""
    if word.certainty != "literal" or word.value is None or command.cwd is None:
        return None
    value = os.path.expanduser(word.value)
    bases = dict.fromkeys([command.cwd, places.cwd])
    return [os.path.normpath(value if os.path.isabs(value) else os.path.join(base, value)) for base in bases]


def _glob_inside(word: Word, command: SimpleCommand, places: Places) -> bool:
    """A glob read (`cat src/*.py`) stays inside when the part before its first wildcard does and it climbs
    nowhere."""
    value = word.value or ""
    if word.certainty != "glob" or ".." in value.split("/") or command.cwd is None:
        return False
    fixed = os.path.dirname(value[: min(value.find(c) for c in "*?[{" if c in value)] + "x")
    return all(places.inside(p) for p in resolved(Word(fixed, fixed or "."), command, places) or [])


def reads_inside(command: SimpleCommand, places: Places) -> bool:
    """A read-only command whose every path may be read (inside the working directories, no deny rule)."""
    paths = read_paths(command)
    if paths is None:
        return False
    for word in paths:
        where = resolved(word, command, places)
        if where is None and not _glob_inside(word, command, places):
            return False
        if where is not None and not all(places.inside(p) and places.readable(p) for p in where):
            return False
    return True


def _through(chain: list[SimpleCommand], wrappers: frozenset[str]) -> Iterator[SimpleCommand]:
    """The chain's commands from the outside in, as far as the wrappers that are seen through."""
    for command in chain:
        yield command
        if command.program not in wrappers:
            return


def _plain(command: SimpleCommand) -> bool:
    """No `NAME=value` before it and no word the shell decides (`$(…)`, `${…}`, `$((…))`)."""
    return not command.assignments and all(w.certainty != "unknown" for w in command.words)


def redirect_targets(line: ShellLine) -> Iterator[tuple[SimpleCommand, Word]]:
    """The files a line's redirections write (not /dev/null, not a file descriptor)."""
    for command, redirect in line.writes():
        if redirect.target.value not in NOWHERE:
            yield command, redirect.target


def writes_of(line: ShellLine) -> Iterator[tuple[SimpleCommand, Word]]:
    """Every file the line writes that it names: redirection targets and file commands' paths."""
    yield from redirect_targets(line)
    for command in line.commands:
        for word in written_paths(command) or []:
            yield command, word


def paths_touched(line: ShellLine, places: Places) -> Iterator[tuple[Literal["read", "edit"], SimpleCommand, str]]:
    """The files a line reads (read-only commands' paths) and writes (redirections, file commands), where known:
    Read and Edit deny rules cover them as they cover the file tools (as Claude Code)."""
    for command, word in writes_of(line):
        for path in resolved(word, command, places) or []:
            yield "edit", command, path
    for command in line.commands:
        for word in read_paths(command) or []:
            for path in resolved(word, command, places) or []:
                yield "read", command, path


def protected_write(line: ShellLine, places: Places) -> str | None:
    """Why this line needs a person whatever the rules say: it writes a protected place, or writes where that
    cannot be known before it runs."""
    for command, word in writes_of(line):
        where = resolved(word, command, places)
        if where is None:
            if word.value in NOWHERE:
                continue
            return f"`{command.text}` writes to `{word.written}`, which is known only when it runs"
        for path in where:
            real = os.path.realpath(path)
            reason = protected_reason(real, places.root_of(real), places.home)
            if reason is not None:
                return reason
    return None


def only_reads(line: ShellLine, places: Places) -> bool:
    """Claude Code's read-only commands, each reading only where it may, writing nothing, expanding nothing
    that runs: such a line runs unasked in every mode."""
    if line.unclear or line.beside or any(True for _ in redirect_targets(line)):
        return False
    return all(_plain(c) for c in line.commands) and all(_chain_reads(chain, places) for chain in chains(line))


def _chain_reads(chain: list[SimpleCommand], places: Places) -> bool:
    return any(reads_inside(c, places) for c in _through(chain, QUIET_WRAPPERS) if _plain(c))


def accepts_edits(line: ShellLine, places: Places) -> bool:
    """acceptEdits: file commands and redirections writing inside the working directories, reads inside them."""
    if line.unclear or line.beside or _changes_directory(line) or not all(_plain(c) for c in line.commands):
        return False
    for command, word in redirect_targets(line):
        where = resolved(word, command, places)
        if where is None or not all(places.inside(p) for p in where):
            return False
    return all(_chain_reads(chain, places) or _chain_edits(chain, places) for chain in chains(line))


def _chain_edits(chain: list[SimpleCommand], places: Places) -> bool:
    for command in _through(chain, QUIET_WRAPPERS):
        if is_file_command(command):
            paths = [resolved(w, command, places) for w in written_paths(command) or []]
            return bool(paths) and all(p is not None and all(places.inside(x) for x in p) for p in paths)
    return False


def _changes_directory(line: ShellLine) -> bool:
    """A `cd` in a line that does more: where its later parts run is easy to misjudge, so it asks (as Claude Code)."""
    return len(line.commands) > 1 and any(c.program in ("cd", "pushd", "popd") for c in line.commands)


def why_rules_fall_short(line: ShellLine, allowed: Callable[[str], bool], places: Places) -> str | None:
    """None when pattern rules (`allowed` matches a command's text) allow every part of the line; else the
    first reason they do not, in Claude Code's words where it has them."""
    if line.unclear:
        return line.unclear[0]
    for command in line.commands:
        unknown = next((w for w in command.words if w.certainty == "unknown"), None)
        if unknown is not None:
            return f"`{unknown.written}` is expanded by the shell when it runs, so no rule can check it"
    for command, word in redirect_targets(line):
        if (why := _redirect_needs_approval(command, word, places)) is not None:
            return why
    if _changes_directory(line) and not all(_chain_reads(chain, places) for chain in chains(line)):
        return "a command that changes directory and then does more needs approval"
    for chain in chains(line):
        if not _chain_allowed(chain, allowed, places):
            shown = f"{chain[-1].program} …" if len(chain[-1].words) > 1 else chain[-1].program
            return f"the part `{shown}` is not allowed by a rule"  # its program: the words may hold anything
    return None


def _redirect_needs_approval(command: SimpleCommand, word: Word, places: Places) -> str | None:
    """Why a redirection's target needs a person (None when an Edit rule allows writing it)."""
    if (word.value or "").startswith("~"):
        return f"`{word.written}`: shell expansion in a redirection's path needs approval"
    parts = (word.value or "").split("/")
    if ".." in parts[1:] and any(p not in ("", ".", "..") for p in parts[: parts.index("..", 1)]):
        return f"`{word.written}` climbs with '..' after a directory, which may follow a link elsewhere: needs approval"
    where = resolved(word, command, places)
    if where is None:
        return f"the redirection's target `{word.written}` is known only when the command runs"
    if all(places.editable(p) for p in where):
        return None
    path = where[0]
    if places.inside(path):
        return (f"Output redirection to '{path}' needs approval: the path is inside the working directories, "
                "and a shell command that creates, changes or removes files there is asked about first")  # fmt: skip
    return f"Output redirection to '{path}' needs approval: the path is outside the working directories"


def _chain_allowed(chain: list[SimpleCommand], allowed: Callable[[str], bool], places: Places) -> bool:
    for command in _through(chain, RULE_WRAPPERS):
        if _plain(command) and allowed(command.text):
            return _paths_inside(command, places)
        if _plain(command) and reads_inside(command, places):
            return True
    return False


def _paths_inside(command: SimpleCommand, places: Places) -> bool:
    """A rule with a pattern reaches no path outside the working directories that a path command names."""
    if writes_by_option(command):
        return False
    words = read_paths(command)
    if words is None:
        words = written_paths(command)
    if words is None:
        return True  # a program whose words are not known to be paths
    return all((where := resolved(w, command, places)) is not None and all(map(places.inside, where)) for w in words)


def deny_spellings(line: ShellLine) -> Iterator[str]:
    """Every spelling of every command a deny rule looks at: as written, with quotes and escapes removed, and
    with the program's directory dropped (`/bin/rm x` is `rm x`)."""
    for command in line.commands:
        values = [w.value if w.value is not None else w.written for w in command.words]
        yield command.text
        yield " ".join(values)
        if values and "/" in values[0]:
            yield " ".join([os.path.basename(values[0]), *values[1:]])


def top_level_texts(line: ShellLine) -> Sequence[str]:
    """The commands a person sees in the line (what "don't ask again" remembers), innermost of each wrapper."""
    return list(dict.fromkeys(chain[-1].text for chain in chains(line) if chain[0].via in ("",)))
