"""Output styles as Claude Code 2.1.332 finds them: its built-ins (default, Proactive, Concise, Explanatory, Learning;
their texts here are our own words), then `<config root>/output-styles/*.md`, then `.claude/output-styles/*.md` of the
project (a later one of the same name wins); `outputStyle` in any settings file names the one in use."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentteams.settings.edit import edit_file
from agentteams.settings.frontmatter import FrontMatterError, read_markdown
from agentteams.settings.load import paths_for

DEFAULT = "default"  # no style: the prompt as it is
Origin = Literal["built-in", "user", "project"]


@dataclass(frozen=True)
class OutputStyle:
    """One style: its name (the file's `name:`, else the file's stem), its one-line description, the text that goes
    into the system prompt (the file's body, stripped) and the line that closes the prompt while it is on."""

    name: str
    description: str
    prompt: str
    origin: Origin = "built-in"
    closing: str = ""

    def closing_line(self) -> str:
        return self.closing or f"{self.name} output style is active: answer in the way its section above describes."


BUILTINS: tuple[OutputStyle, ...] = (
    OutputStyle(
        "Proactive",
        "Gets on with the work at once, asks little, acts rather than plans",
        "Work on your own and keep going: the user wants the task carried out, not discussed.\n\n"
        "- Start on the work straight away; where a routine choice is open, pick the sensible option and say which.\n"
        "- Ask only when a choice is costly to undo or truly the user's to make.\n"
        "- Do not stop to plan in plan mode unless the user asks for a plan.\n"
        "- Treat a correction from the user mid-way as ordinary input and adjust.\n"
        "- Acting on your own does not cover destroying data or touching shared or production systems: ask first, "
        "or find a safer way.\n"
        "- Post nothing to chats, tickets or other outside services, and share no secret, unless the user said so.",
        closing="Proactive output style is active: act on your own, ask little, prefer doing over planning.",
    ),
    OutputStyle(
        "Concise",
        "Short answers: the result first, no preamble or running commentary",
        "Keep every answer short. Lead with the result or the answer itself; leave out introductions, restating the "
        "question, narration of each step and closing summaries. Use a list only when it is shorter than prose. "
        "Say what you changed and how you checked it in a sentence or two; give detail only when asked.",
        closing="Concise output style is active: the result first, then only what the user needs, nothing around it.",
    ),
    OutputStyle(
        "Explanatory",
        "Explains the choices made and the patterns of the codebase along the way",
        "Besides doing the software task, help the user understand the codebase as you go.\n\n"
        "Be clear and instructive without losing sight of the task; an explanation may make an answer longer, but "
        "keep it to the point.\n\n"
        "## Notes on the work\n"
        "Before and after writing code, add a short note of two or three points on why it is built the way it is, "
        "set apart from the rest of the answer like this:\n"
        "`» Why this way ───────────────────────────────`\n"
        "[two or three points about this code or this codebase]\n"
        "`───────────────────────────────────────────────`\n"
        "These notes belong in the conversation, never in the code. Prefer what is particular to this codebase "
        "and this change over general programming advice.",
    ),
    OutputStyle(
        "Learning",
        "Asks you to write small pieces of the code yourself, for hands-on practice",
        "Besides doing the software task, help the user learn by having them write some of the code.\n\n"
        "Be encouraging and work together: do the routine parts yourself, and hand the user the decisions that "
        "teach something.\n\n"
        "## Handing over a piece\n"
        "When a change needs more than about twenty lines and part of it is a real design choice (error handling, a "
        "data structure, business rules with several fair answers, a key algorithm or interface), ask the user to "
        "write that part, two to ten lines:\n"
        "1. First put a single `TODO(human)` comment where their code goes, with your editing tools.\n"
        "2. Then ask, in this form, and stop there until they have written it:\n"
        "```\n"
        "» Your turn\n"
        "What is there: [what is built so far and why this choice matters]\n"
        "What to write: [the function or section, in which file; look for TODO(human)]\n"
        "Things to weigh: [trade-offs and constraints]\n"
        "```\n"
        "If you keep a todo list, give the hand-over a todo item of its own.\n"
        "Afterwards, add one remark linking what they wrote to the wider design; no praise, no repetition.\n\n"
        "## Notes on the work\n"
        "Before and after writing code, add a short note of two or three points on why it is built the way it is, "
        "in the conversation rather than in the code, particular to this codebase rather than general advice.",
    ),
)


def load_styles(cwd: Path, root: Path) -> dict[str, OutputStyle]:
    """Every style by name, in the order /output-style lists them: the built-ins, the user's (`root`, the config
    root), the project's (`cwd`); a file that cannot be read is left out."""
    styles = {s.name: s for s in BUILTINS}
    for origin, folder in (("user", root / "output-styles"), ("project", cwd / ".claude" / "output-styles")):
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            style = _read(path, "user" if origin == "user" else "project")
            if style is not None:
                styles.pop(style.name, None)  # a later one of the same name replaces it, listed where it is read
                styles[style.name] = style
    return styles


def _read(path: Path, origin: Origin) -> OutputStyle | None:
    try:
        doc = read_markdown(path)
    except (OSError, UnicodeDecodeError, FrontMatterError):
        return None
    return OutputStyle(doc.text("name") or path.stem, doc.text("description") or "", doc.body.strip(), origin)


def chosen(merged: dict[str, Any], cwd: Path, root: Path) -> OutputStyle | None:
    """The style `outputStyle` names (its exact name, as 2.1.332 matches it), None for default, unset or unknown,
    and under --bare or --safe-mode (claude 2.1.332 applies none then, a built-in one neither)."""
    if os.environ.get("CLAUDE_CODE_SIMPLE") or os.environ.get("CLAUDE_CODE_SAFE_MODE"):
        return None
    name = merged.get("outputStyle")
    if not isinstance(name, str) or name in ("", DEFAULT):
        return None
    return load_styles(cwd, root).get(name)


def named(name: str, styles: dict[str, OutputStyle]) -> OutputStyle | None:
    """A style as typed after /output-style: its name in any case."""
    low = name.lower()
    return next((s for s in styles.values() if s.name.lower() == low), None)


def write_choice(cwd: Path, name: str) -> Path:
    """`outputStyle` set in the project's local settings (`.claude/settings.local.json`), where /output-style writes
    it, every other key kept; the file. An AgentTeamsError says why the file was left alone."""
    path = paths_for(cwd)["local"]
    return edit_file(path, lambda data: data.update(outputStyle=name), "the output style was not saved")
