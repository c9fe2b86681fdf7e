"""What a Bash line read by shell_syntax is made of (words and how well their values are known, redirections,
simple commands, the line) and what a command runs in its turn: a wrapper's command, a shell's `-c` script,
`eval`'s words, `find -exec`'s command."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

# how a word's value is known before the command runs
Certainty = Literal["literal", "glob", "variable", "unknown"]


@dataclass(frozen=True)
class Word:
    """One word of a command: as written, and the value the program receives when that is known."""

    written: str
    value: str | None  # quotes and escapes removed; None when an expansion decides it at run time
    certainty: Certainty = "literal"


@dataclass(frozen=True)
class Redirect:
    """`> f`, `>> f`, `2> f`, `&> f`, `>| f`, `< f`: the file a command's output goes to (or input comes from)."""

    operator: str
    target: Word
    writes: bool


@dataclass(frozen=True)
class SimpleCommand:
    """One program run: its words (program first), the `NAME=value` before it, its redirections, the directory
    it runs in (None when a `cd` before it cannot be followed) and how it is reached (`sh -c`, `$(…)`...)."""

    words: tuple[Word, ...]
    assignments: tuple[str, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    cwd: str | None = None
    via: str = ""  # "" at the top; else the construct that runs it

    @property
    def text(self) -> str:
        """The command as written, without its assignments and redirections, words joined by one space."""
        return " ".join(w.written for w in self.words)

    @property
    def program(self) -> str | None:
        return self.words[0].value if self.words else None

    def args(self) -> tuple[Word, ...]:
        return self.words[1:]


@dataclass(frozen=True)
class ShellLine:
    """A command line read: every simple command in the order the shell meets them; why (if so) no rule can
    approve the line before it runs (`unclear`), and, among those, why some command in it cannot even be seen
    (`hidden`: `$CMD x`, `eval "$S"`, a line that does not parse), which a deny rule must not overlook."""

    commands: tuple[SimpleCommand, ...]
    unclear: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    # what only a rule may let through, never the read-only check: `NAME=value` statements, tests (`[ -f x ]`)
    beside: tuple[str, ...] = ()

    def writes(self) -> Iterator[tuple[SimpleCommand, Redirect]]:
        for command in self.commands:
            for redirect in command.redirects:
                if redirect.writes:
                    yield command, redirect


# programs that run the command given after their own options: a rule looks through them
WRAPPERS = frozenset({"env", "sudo", "command", "builtin", "exec", "nohup", "time", "nice", "timeout", "stdbuf",
                      "xargs", "doas", "ionice", "chrt", "setsid", "watch", "caffeinate", "unbuffer"})  # fmt: skip
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "busybox"})
# variables that change which program runs or what a shell does before it runs anything: setting one in a line is
# never approved by a rule (`PATH=/tmp/x:$PATH; git status` runs another git)
STEERING_VARIABLES = frozenset({"PATH", "IFS", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS4", "SHELLOPTS", "BASHOPTS",
                                "CDPATH", "GLOBIGNORE", "HOME", "PYTHONPATH", "PYTHONSTARTUP", "NODE_OPTIONS",
                                "PERL5OPT", "RUBYOPT", "GIT_DIR", "GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND",
                                "GIT_CONFIG_GLOBAL", "EDITOR", "VISUAL", "PAGER", "GIT_PAGER"})  # fmt: skip
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# options of a wrapper that take a value (`timeout -s KILL 5 cmd`, `nice -n 5 cmd`, `sudo -u root cmd`)
_VALUED = {
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "nice": {"-n", "--adjustment"},
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "--user", "--group"},
    "doas": {"-u", "-C"},
    "stdbuf": {"-i", "-o", "-e"},
    "ionice": {"-c", "-n", "-p"},
    "xargs": {"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--arg-file", "--delimiter", "--max-args"},
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "watch": {"-n", "--interval", "-d"},
    "chrt": {"-p"},
}


_ORDER: dict[Certainty, int] = {"literal": 0, "glob": 1, "variable": 2, "unknown": 3}


def worse(a: Certainty, b: Certainty) -> Certainty:
    return a if _ORDER[a] >= _ORDER[b] else b


def unescape_word(text: str) -> tuple[str, Certainty]:
    """An unquoted word: backslashes removed; `*`, `?`, `[` or a leading `~user` make its value the shell's."""
    out, glob, i = [], False, 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
            continue
        glob = glob or ch in "*?["
        out.append(ch)
        i += 1
    value = "".join(out)
    if value.startswith("~") and not (value == "~" or value.startswith("~/")):
        return value, "variable"  # `~user/…`: another user's home
    return value, "glob" if glob else "literal"


def unescape_double(text: str) -> str:
    return re.sub(r'\\([$`"\\\n])', r"\1", text)


def script_of(name: str, args: list[Word]) -> str | None:
    """The script `sh -c 'SCRIPT'` or `eval WORD…` runs, when every word of it is known."""
    if name == "eval":
        if not args or any(w.certainty != "literal" for w in args):
            return None
        return " ".join(w.value or "" for w in args)
    for i, word in enumerate(args):
        value = word.value or ""
        if value.startswith("-") and "c" in value.lstrip("-") and not value.startswith("--"):
            if i + 1 < len(args) and args[i + 1].certainty == "literal":
                return args[i + 1].value
            return None
        if not value.startswith("-"):
            return None  # `sh script.sh`: a file runs, not a string
    return None


def wrapped(name: str, args: list[Word]) -> list[Word]:
    """The command a wrapper runs: its own options (and their values), `NAME=value` words and durations skipped."""
    valued, i, duration = _VALUED.get(name, set()), 0, name == "timeout"
    while i < len(args):
        value = args[i].value or ""
        if value == "--":
            i += 1
            break
        if value.startswith("-") and len(value) > 1:
            i += 2 if value in valued else 1
            continue
        if name == "env" and _ASSIGNMENT.match(value):
            i += 1
            continue
        if duration:  # `timeout 5 cmd`
            i, duration = i + 1, False
            continue
        break
    return args[i:]


def find_actions(args: list[Word]) -> list[list[Word]]:
    """The commands `find … -exec CMD {} ;` (also -execdir, -ok, -okdir) runs."""
    actions: list[list[Word]] = []
    i = 0
    while i < len(args):
        if (args[i].value or "") in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and (args[j].value or "") not in (";", "+"):
                j += 1
            if j > i + 1:
                actions.append(args[i + 1 : j])
            i = j
        i += 1
    return actions
