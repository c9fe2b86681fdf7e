"""Bash command rules: `Bash(git:*)` (a prefix at a word boundary), `Bash(npm run test)` (exactly that) and
`Bash(ls *)` (a wildcard) matched against one simple command; a deny rule against every spelling of every command
of a line (through wrappers, `sh -c`, `$(…)`, quotes and the program's directory)."""

from __future__ import annotations

import re

from agentteams.agent.permissions.bash_judge import deny_spellings
from agentteams.agent.permissions.shell_commands import ShellLine

_SUBCOMMAND_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def command_matches(pattern: str, command: str) -> bool:
    """Whether one simple command (its words joined by one space) matches a rule's pattern."""
    command = " ".join(command.split())
    if pattern.endswith(":*"):
        prefix = " ".join(pattern[:-2].split())
        return command == prefix or command.startswith(prefix + " ")
    if "*" in pattern:
        # a space beside `*` stays a word boundary (`ls *` is not `lsof`); a lone trailing ` *` may match nothing
        spaced = re.sub(r"\s+", " ", pattern.strip())
        optional_tail = spaced.endswith(" *") and spaced.count("*") == 1
        regex = ".*".join(re.escape(part) for part in spaced.split("*"))
        if optional_tail:
            regex = re.escape(spaced[:-2]) + "(?: .*)?"
        return re.fullmatch(regex, command, re.DOTALL) is not None
    return command == " ".join(pattern.split())


def command_covered(pattern: str, line: ShellLine, *, deny: bool) -> bool:
    """Deny: some command of the line, in some spelling, matches. Allow: every command matches as written
    (the policy adds what else a line must satisfy)."""
    if deny:
        return any(command_matches(pattern, s) for s in deny_spellings(line))
    return bool(line.commands) and all(command_matches(pattern, c.text) for c in line.commands)


def command_prefix(command: str) -> str:
    """What "allow always" remembers for a command: its program, plus a subcommand word (`git status`)."""
    words = command.split()
    if len(words) > 1 and _SUBCOMMAND_WORD.match(words[1]):
        return f"{words[0]} {words[1]}"
    return words[0] if words else command
