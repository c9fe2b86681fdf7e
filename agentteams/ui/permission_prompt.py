"""What a permission question shows and offers, as Claude Code's: a Write's content, an Edit's diff, a command and
the directory it runs in; and what "yes, and don't ask again" means for this call (acceptEdits for an edit, the
command's prefix, the path or the tool)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentteams.agent.permissions.bash_judge import line_of, top_level_texts
from agentteams.agent.permissions.bash_rules import command_prefix
from agentteams.ui.render import describe_input

EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
MAX_LINES = 60  # of a file's content or a diff: the rest is counted, not shown
SYNTAX = {".py": "python", ".js": "javascript", ".ts": "typescript", ".json": "json", ".md": "markdown",
          ".sh": "bash", ".toml": "toml", ".yml": "yaml", ".yaml": "yaml", ".html": "html", ".css": "css",
          ".rs": "rust", ".go": "go", ".c": "c", ".java": "java", ".rb": "ruby"}  # fmt: skip


@dataclass(frozen=True)
class Shown:
    """A permission question's parts: its line, what it is about (and how to colour it), choice 2's words, and
    whether choice 2 switches the session to acceptEdits."""

    text: str
    detail: str
    syntax: str | None
    always: str
    accept_edits: bool = False


def shown(who: str | None, tool: str, args: dict[str, Any], reason: str, cwd: Path) -> Shown:
    """The question `who` ("The lead", "Teammate amy") asks about one tool call; a session without a team (`who`
    None) asks it of the person as claude 2.1.332 does, with no one named ("Run this command?")."""
    if who is None:
        return _solo(shown("", tool, args, reason, cwd), tool)
    why = f" ({reason})" if reason else ""
    if tool == "Write":
        path = Path(str(args.get("file_path", "")))
        verb = "overwrite" if path.exists() else "create"
        detail, syntax = _clipped(str(args.get("content", ""))), SYNTAX.get(path.suffix)
        return Shown(f"{who} wants to {verb} {path}{why}.", detail, syntax, _ACCEPT_EDITS, accept_edits=True)
    if tool in ("Edit", "MultiEdit"):
        path = Path(str(args.get("file_path", "")))
        return Shown(f"{who} wants to edit {path}{why}.", _diff(path, args), "diff", _ACCEPT_EDITS, accept_edits=True)
    if tool == "NotebookEdit":
        notebook = str(args.get("notebook_path", ""))
        detail = _clipped(str(args.get("new_source", "")))
        return Shown(f"{who} wants to edit the notebook {notebook}{why}.", detail, "python", _ACCEPT_EDITS, True)
    if tool == "Bash":
        command = str(args.get("command", ""))
        prefixes = [f"Bash({command_prefix(t)}:*)" for t in top_level_texts(line_of(command, str(cwd)))]
        always = f"and don't ask again for {', '.join(prefixes) or 'this command'} in this session"
        detail = f"{command}\n# in {cwd}"
        return Shown(f"{who} wants to run a command{why}.", detail, "bash", always)
    if tool == "ExitPlanMode":
        text = f"{who} has a plan and wants to leave plan mode and start on it."
        return Shown(text, str(args.get("plan", "")), "markdown", "and accept edits from now on", accept_edits=True)
    target = describe_input(args)
    return Shown(f"{who} wants to use {tool}({target}){why}.", "", None, f"and don't ask again for {tool} like this")


_ACCEPT_EDITS = "and accept edits for the rest of this session (acceptEdits)"
# the team's wording (" wants to edit x.") as a question to the person, by its verb
_SOLO = (("wants to run a command", "Run this command"), ("wants to create ", "Create "),
         ("wants to overwrite ", "Overwrite "), ("wants to edit the notebook ", "Edit the notebook "),
         ("wants to edit ", "Make this edit to "), ("wants to use ", "Allow "),
         ("has a plan and wants to leave plan mode and start on it",
          "Leave plan mode and start on this plan"))  # fmt: skip


def _solo(asked: Shown, tool: str) -> Shown:
    """`asked` (worded for no one: " wants to …") as a question to the person: "Create /x/y.txt?"."""
    text = asked.text.strip()
    for team, solo in _SOLO:
        if text.startswith(team):
            return replace(asked, text=solo + text[len(team) :].removesuffix(".") + "?")
    return replace(asked, text=f"Allow {tool}?")


def _clipped(text: str) -> str:
    lines = text.splitlines()
    if len(lines) <= MAX_LINES:
        return text.rstrip("\n")
    return "\n".join([*lines[:MAX_LINES], f"… {len(lines) - MAX_LINES} more lines"])


def _diff(path: Path, args: dict[str, Any]) -> str:
    """The edit as a unified diff of the file (the strings alone when the file cannot be read)."""
    given = args.get("edits")
    edits: list[Any] = given if isinstance(given, list) else [args]
    try:
        before = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        before = "\n".join(str(e.get("old_string", "")) for e in edits if isinstance(e, dict))
        after = "\n".join(str(e.get("new_string", "")) for e in edits if isinstance(e, dict))
    else:
        after = before
        for e in (e for e in edits if isinstance(e, dict)):
            old, new = str(e.get("old_string", "")), str(e.get("new_string", ""))
            after = after.replace(old, new) if e.get("replace_all") else after.replace(old, new, 1)
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), str(path), str(path), n=3, lineterm="")
    return _clipped("\n".join(lines)) or "(no change)"
