"""What one simple command does to paths, as Claude Code judges it: the commands that only read (`cat`, `grep`,
`git status`...) and the paths they read; the file commands acceptEdits lets through (`mkdir`, `touch`, `rm`,
`rmdir`, `mv`, `cp`, `sed -i`) and every command's paths that it writes; and the protected places."""

from __future__ import annotations

import os
import re

from agentteams.agent.permissions.shell_commands import SimpleCommand, Word

# directories no mode but bypassPermissions, and no allow rule, lets a tool write into unasked (as Claude Code 2.1.332;
# any segment, compared in lower case: a case-insensitive disk has one `.git` however it is spelled)
PROTECTED_DIRS = frozenset(
    {".git", ".claude", ".vscode", ".idea", ".husky", ".cargo", ".devcontainer", ".yarn", ".mvn"}
)
PROTECTED_SUBDIRS = (".config/git",)
# files that configure a shell, git, a package manager, a build or an agent: never written unasked, wherever they are
# (Claude Code's list, and a few that hold credentials or run at a shell's start besides)
PROTECTED_FILES = frozenset({
    ".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".zshenv", ".zlogin",
    ".zlogout", ".bash_login", ".bash_aliases", ".bash_logout", ".envrc", ".ripgreprc", ".mcp.json", ".claude.json",
    ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnp.cjs", ".pnp.loader.mjs", ".pnp.js", ".pnp.data.json", ".pnpmfile.cjs",
    "bunfig.toml", ".bunfig.toml", ".bazelrc", ".bazelversion", ".bazeliskrc", ".pre-commit-config.yaml",
    "lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml", "gradle-wrapper.properties",
    "maven-wrapper.properties", ".devcontainer.json", "pyrightconfig.json",
    ".kshrc", ".cshrc", ".tcshrc", ".inputrc", ".netrc", ".pypirc", ".curlrc", ".wgetrc",
})  # fmt: skip
# directories under the home that hold credentials or start-up code (ours: Claude Code asks only as for any path
# outside the working directories)
PROTECTED_HOME_DIRS = (".ssh", ".gnupg", ".aws", ".config/fish", ".docker", ".kube")

# the commands acceptEdits runs unasked when every path they write is inside the working directories
FILE_COMMANDS = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"})
# other commands whose arguments (or some of them) are files they write
_WRITERS = frozenset({"tee", "ln", "install", "truncate", "chmod", "chown", "chgrp", "dd", "unlink", "shred"})
# commands that only read (or print) and run without asking when every path they name may be read
READ_ONLY = frozenset({"cat", "head", "tail", "wc", "ls", "grep", "egrep", "fgrep", "rg", "pwd", "echo", "stat",
                       "file", "sort", "diff", "cut", "nl", "tac", "tr", "uniq", "find", "sed", "true", "false",
                       "cd", "git", "sleep"})  # fmt: skip
_NO_PATHS = frozenset({"pwd", "echo", "tr", "true", "false", "sleep"})  # their words are text, not files
READ_ONLY_GIT = frozenset({"status", "log", "diff", "show"})
# `find` expressions that run, delete or write something
_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})
# a `sed` script that only prints: line addresses and `p`, `=`, `q`, `l`, `s///` without the `w` or `e` flags
_ADDRESS = r"(?:\d+|\$|/(?:[^/\\]|\\.)*/)"
_SED_READ = re.compile(
    rf"^(?:{_ADDRESS}(?:,{_ADDRESS})?)?!?\s*[pql=dn]$|^(?:{_ADDRESS}(?:,{_ADDRESS})?)?s/(?:[^/\\]|\\.)*/(?:[^/\\]|\\.)*/[gpI0-9]*$"
)
_SED_SUBSTITUTION = re.compile(r"s(/)(?:[^/\\]|\\.)*/(?:[^/\\]|\\.)*/[gpI0-9]*")
# options that write a file: `git diff --output=f`, `sort -o f` (also inside a cluster: `sort -ro f`)
_WRITE_OPTIONS = {"git": re.compile(r"--output|-o$"), "sort": re.compile(r"--output|-[A-Za-z]*o")}
# options that make a reading command run another program: `rg --pre CMD`, `sort --compress-program=CMD`
_RUN_OPTIONS = {"rg": re.compile(r"--pre\b|--pre="), "sort": re.compile(r"--compress-program")}
NOWHERE = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


def _operands(command: SimpleCommand) -> list[Word]:
    """The words after the program that are not options (everything after `--` is an operand)."""
    out, options = [], True
    for word in command.args():
        value = word.value
        if options and value == "--":
            options = False
        elif options and value is not None and value.startswith("-") and value != "-":
            continue
        else:
            out.append(word)
    return out


def read_paths(command: SimpleCommand) -> list[Word] | None:
    """The paths a command that only reads names (none for `echo`); None when the command may write or run
    something, or is not one Claude Code knows to be read-only."""
    program = command.program
    if program not in READ_ONLY:
        return None
    words = [w.value or "" for w in command.args()]
    runs = _RUN_OPTIONS.get(program)
    if writes_by_option(command) or (runs is not None and any(runs.match(w) for w in words)):
        return None
    if program in _NO_PATHS:
        return []
    operands = _operands(command)
    if program == "git":
        subcommand = next((w for w in words if not w.startswith("-")), None)
        return [] if words and not words[0].startswith("-") and subcommand in READ_ONLY_GIT else None
    if program == "sed":
        if any(w.startswith(("-i", "--in-place")) for w in words) or not operands:
            return None
        if not (operands[0].value and _SED_READ.match(operands[0].value)):
            return None
        return operands[1:]
    if program == "find":
        if any(w in _FIND_ACTIONS for w in words):
            return None
        return [w for w in command.args() if w.value and not w.value.startswith(("-", "(", ")", "!"))][:1] or []
    if program in ("grep", "egrep", "fgrep", "rg"):
        given = any(w in ("-e", "-f", "--regexp", "--file") or w.startswith(("-e", "--regexp=")) for w in words)
        return operands if given else operands[1:]
    if program == "uniq" and len(operands) > 1:
        return None  # `uniq in out` writes out
    return operands


def written_paths(command: SimpleCommand) -> list[Word] | None:
    """The paths a file command writes (touch, mkdir, rm, mv, cp, `sed -i`, tee, ln...); None for a command
    that writes no file it names."""
    program = command.program
    if program == "sed":
        words = [w.value or "" for w in command.args()]
        if not any(w.startswith(("-i", "--in-place")) for w in words):
            return None
        operands = _operands(command)
        script = operands[0].value if operands else None
        if script is None or not _SED_SUBSTITUTION.fullmatch(script):
            return None  # a script that may hold `w file` or `e command`: not a plain edit
        return operands[1:]
    if program == "dd":
        return [Word(w.written, w.value[3:] if w.value else None, w.certainty)
                for w in command.args() if (w.value or "").startswith("of=")]  # fmt: skip
    if program in FILE_COMMANDS or program in _WRITERS:
        return _operands(command)
    return None


def writes_by_option(command: SimpleCommand) -> bool:
    """An option that makes a reading command write a file (`git log -o f`, `git diff --output=f`, `sort -o f`)."""
    writes = _WRITE_OPTIONS.get(command.program or "")
    return writes is not None and any(writes.match(w.value or "") for w in command.args())


def is_file_command(command: SimpleCommand) -> bool:
    """One of the commands acceptEdits runs unasked (their paths checked by the caller)."""
    return command.program in FILE_COMMANDS and written_paths(command) is not None


def protected_reason(path: str, root: str, home: str) -> str | None:
    """Why writing `path` (absolute, links resolved) needs a person whatever the rules say, or None;
    `root` is the working directory it is in ("/" when outside them all)."""
    relative = os.path.relpath(path, root).lower()
    parts = relative.split(os.sep)
    hit = next((part for part in parts if part.rstrip(". ") in PROTECTED_DIRS), None)
    hit = hit or next((sub for sub in PROTECTED_SUBDIRS if f"/{sub}/" in f"/{relative}/"), None)
    if hit is not None:
        return f"{path} is a sensitive file (in a protected directory, {hit}): it is never written unasked"
    if parts[-1].rstrip(". ") in PROTECTED_FILES:
        return f"{path} is a sensitive file: it is never written unasked"
    for sub in PROTECTED_HOME_DIRS:
        guarded = os.path.join(home, sub)
        if path == guarded or path.startswith(guarded + os.sep):
            return f"{path} is a sensitive file (under ~/{sub}): it is never written unasked"
    return None
