"""Custom slash commands: `.claude/commands/**/*.md` (project) and `<config root>/commands/**/*.md` (user), and
how a command's body becomes the prompt (`$ARGUMENTS`, `$0`, `$1`, `$ARGUMENTS[N]`), as Claude Code 2.1.330 does.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentteams.settings.frontmatter import FrontMatterError, MarkdownDoc, read_markdown

CommandScope = Literal["user", "project", "plugin"]  # plugin: a `--plugin-dir` plugin's (settings/plugins.py)
# `$ARGUMENTS[N]`, `$ARGUMENTS` and `$N` (N from 0: `$0` is the first argument), read in that order
_PLACEHOLDER = re.compile(r"\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS|\$(\d+)")
# what may follow `/` for a line to be a command attempt (`/usr/bin/x` has a second `/`: a prompt)
COMMAND_NAME = re.compile(r"[A-Za-z0-9_][\w.:-]*")
MAX_DEPTH = 4  # namespace levels read below commands/ (a symlink loop must not walk for ever)


@dataclass(frozen=True)
class CustomCommand:
    """One markdown command file: its name (`frontend:comp` for `frontend/comp.md`), front matter and body."""

    name: str
    scope: CommandScope
    path: Path
    body: str
    namespace: str = ""
    description: str | None = None
    argument_hint: str | None = None
    model: str | None = None
    allowed_tools: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """`(project)`, `(user)`, `(project:frontend)` or `(a-plugin)`, as Claude Code shows where a command comes
        from."""
        if self.scope == "plugin":
            return f"({self.namespace})"
        return f"({self.scope}{':' + self.namespace if self.namespace else ''})"

    def summary(self) -> str:
        """The description, else the body's first line (what Claude Code shows when there is none)."""
        first = next((ln.strip() for ln in self.body.splitlines() if ln.strip()), "")
        return self.description or first[:80]

    def prompt(self, arguments: str) -> str:
        """What the model receives: the command's tags (as Claude Code sends them), then the expanded body."""
        args = arguments.strip()
        tags = f"<command-message>{self.name}</command-message>\n<command-name>/{self.name}</command-name>"
        if args:
            tags += f"\n<command-args>{args}</command-args>"
        return f"{tags}\n\n{expand(self.body, args)}"


@dataclass(frozen=True)
class CommandSet:
    """The custom commands found (by name) and one line per file that could not be read."""

    commands: dict[str, CustomCommand] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def get(self, name: str) -> CustomCommand | None:
        return self.commands.get(name)


def invocation(line: str, commands: CommandSet) -> tuple[CustomCommand, str] | None:
    """The custom command a line calls (`/name args…`) and its arguments, or None."""
    text = line.strip()
    word = text.split(maxsplit=1)[0] if text else ""
    command = commands.get(word[1:]) if word.startswith("/") else None
    return (command, text[len(word) :].strip()) if command is not None else None


def split_arguments(arguments: str) -> list[str]:
    """The arguments as a shell would split them (quotes group words); plain whitespace when the quoting is broken."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def expand(body: str, arguments: str) -> str:
    """`body` with the placeholders replaced. Without arguments nothing changes; a body with no placeholder gets
    `ARGUMENTS: …` appended; an index past the last argument stays as written (2.1.330's behaviour)."""
    args = arguments.strip()
    if not args:
        return body
    words = split_arguments(args)
    used = False

    def replace(match: re.Match[str]) -> str:
        nonlocal used
        used = True
        index = match.group(1) or match.group(2)
        if index is None:
            return args
        n = int(index)
        return words[n] if n < len(words) else match.group(0)

    expanded = _PLACEHOLDER.sub(replace, body)
    return expanded if used else f"{body.rstrip()}\n\nARGUMENTS: {args}"


def command_dirs(cwd: Path, root: Path) -> list[tuple[CommandScope, Path]]:
    """Where commands are read, first found wins: the user's, then `.claude/commands` of `cwd` and each directory
    above it, nearest first (Claude Code finds a parent's commands from a subdirectory)."""
    here = Path(os.path.abspath(cwd))
    dirs: list[tuple[CommandScope, Path]] = [("user", root / "commands")]
    user = os.path.realpath(root / "commands")
    for d in (here, *here.parents):
        candidate = d / ".claude" / "commands"
        if os.path.realpath(candidate) != user:  # ~/.claude/commands is the user's, not a project's
            dirs.append(("project", candidate))
    return dirs


def commands_off() -> bool:
    """--disable-slash-commands or --safe-mode (their variables, which teammates inherit): no custom command."""
    return bool(os.environ.get("AGENTTEAMS_DISABLE_SLASH_COMMANDS") or os.environ.get("CLAUDE_CODE_SAFE_MODE"))


def load_commands(cwd: Path, root: Path, scopes: Collection[str] = ("user", "project")) -> CommandSet:
    """Every custom command for a session at `cwd` with config root `root`, from the `scopes` read (as
    `--setting-sources` names them). On a name defined twice the user's wins, then the nearest project's (Claude
    Code 2.1.330 runs the user's). A file that cannot be read is one line in `problems`; the others still load."""
    found: dict[str, CustomCommand] = {}
    problems: list[str] = []
    if commands_off():
        return CommandSet(found, ())
    for scope, directory in command_dirs(cwd, root):
        if scope not in scopes:
            continue
        for path, parts in markdown_files(directory):
            name = ":".join(parts)
            if name in found or not COMMAND_NAME.fullmatch(name):
                continue
            try:
                doc = read_markdown(path)
            except (OSError, UnicodeDecodeError, FrontMatterError) as e:
                reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
                problems.append(f"custom command {path}: {reason}; skipped")
                continue
            found[name] = command_from(doc, name, scope, ":".join(parts[:-1]))
    return CommandSet(dict(sorted(found.items())), tuple(problems))


def command_from(doc: MarkdownDoc, name: str, scope: CommandScope, namespace: str) -> CustomCommand:
    tools = doc.meta.get("allowed-tools")  # a YAML list, or rules in one string (split as --allowedTools is)
    listed = tools if isinstance(tools, list) else [tools] if tools else []
    return CustomCommand(
        name=name, scope=scope, path=doc.path, body=doc.body, namespace=namespace,
        description=doc.text("description"), argument_hint=_hint(doc), model=doc.text("model"),
        allowed_tools=tuple(str(t).strip() for t in listed if str(t).strip()),
    )  # fmt: skip


def _hint(doc: MarkdownDoc) -> str | None:
    """`argument-hint`: unquoted `[msg]` is a YAML list, whose words Claude Code 2.1.332 shows as `msg`."""
    value = doc.meta.get("argument-hint")
    if isinstance(value, list):
        return " ".join(str(v) for v in value) or None
    return doc.text("argument-hint")


def markdown_files(directory: Path) -> list[tuple[Path, list[str]]]:
    """(file, name parts) for each `*.md` below `directory`, sorted; subdirectories give the leading parts."""
    out: list[tuple[Path, list[str]]] = []
    if not directory.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(directory, followlinks=True):
        rel = Path(dirpath).relative_to(directory).parts
        if len(rel) >= MAX_DEPTH:
            dirnames.clear()
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for filename in sorted(filenames):
            if filename.endswith(".md") and not filename.startswith("."):
                out.append((Path(dirpath) / filename, [*rel, filename[:-3]]))
    return sorted(out, key=lambda item: item[1])
