"""Bash command rules: a shell line split into its simple commands, and `Bash(git:*)`, `Bash(npm run test)`,
`Bash(ls *)` patterns matched against them (a deny rule looks through wrappers, paths and quotes)."""

from __future__ import annotations

import os
import re

# Words that run the command after them; a deny rule sees through them (`sudo rm x` is still `rm`).
_WRAPPERS = frozenset({"sudo", "env", "command", "builtin", "exec", "nohup", "time", "nice"})
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_SUBCOMMAND_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def subcommands(command: str, *, quotes: bool = True) -> list[str]:
    """The simple commands in a shell line: split at `&&`, `||`, `;`, `|`, `&`, newlines and substitutions.

    Single quotes protect everything; double quotes protect all but `$(` and backticks (with
    `quotes=False` nothing is protected). Whitespace is collapsed so rules compare words, not spacing.
    """
    segments, current, quote, i = [], "", "", 0
    outer: list[str] = []  # the quote state around each open `$(` / `(`
    while i < len(command):
        ch, pair = command[i], command[i : i + 2]
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif pair == "$(" or ch == "`" or (not quote and ch in "()\n;|&" and not _is_redirect(command, i)):
            if pair == "$(" or ch == "(":
                outer, quote = [*outer, quote], ""
            elif ch == ")":
                quote, outer = (outer[-1], outer[:-1]) if outer else ("", outer)
            segments.append(current)
            current, i = "", i + (2 if pair in ("$(", "&&", "||") else 1)
            continue
        elif quotes and ch in "'\"":
            quote = "" if quote == ch else (quote or ch)
        current += ch
        i += 1
    segments.append(current)
    cleaned = (" ".join(s.split()) for s in segments)
    return [s for s in cleaned if s.strip("\"' ")]


def _is_redirect(command: str, i: int) -> bool:
    """Whether the `&` at `i` belongs to a redirection (`2>&1`, `&>file`) rather than ending a command."""
    return command[i] == "&" and ((i > 0 and command[i - 1] in "<>") or command[i + 1 : i + 2] == ">")


def _spellings(segment: str) -> list[str]:
    """A command as written, and without env assignments, wrappers and the program's directory."""
    words = segment.split(" ")
    while words and (_ENV_ASSIGNMENT.match(words[0]) or words[0] in _WRAPPERS or words[0].startswith("-")):
        words = words[1:]
    if not words:
        return [segment]
    words[0] = os.path.basename(words[0].lstrip("\\")) or words[0]
    return list(dict.fromkeys([segment, " ".join(words)]))


def _command_matches(pattern: str, command: str) -> bool:
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


def command_covered(pattern: str, command: str, *, deny: bool) -> bool:
    """Deny: some subcommand, in some spelling, matches. Allow: every subcommand matches as written."""
    parts = subcommands(command)
    if deny:  # a quote-blind split as well: a deny rule would rather refuse too much than too little
        parts += subcommands(command, quotes=False)
        return any(_command_matches(pattern, s) for part in parts for s in _spellings(part))
    return bool(parts) and all(_command_matches(pattern, part) for part in parts)


def command_prefix(segment: str) -> str:
    """What "allow always" remembers for a command: its program, plus a subcommand word (`git status`)."""
    words = segment.split()
    if len(words) > 1 and _SUBCOMMAND_WORD.match(words[1]):
        return f"{words[0]} {words[1]}"
    return words[0] if words else segment
