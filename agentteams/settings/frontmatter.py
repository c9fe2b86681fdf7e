"""Markdown files with a YAML front matter block (custom agents, custom slash commands): `read_markdown`.

Plain `key: value` lines and simple lists of names are read here; anything richer (block scalars, flow maps,
escapes) goes to PyYAML, imported only then: ~25 ms to import, more than the start-up budget for a user's files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentteams.errors import AgentTeamsError

_FENCE = "---"
_PLAIN = re.compile(r"([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(.*))?")
# a value starting with one of these, or holding a comment, is YAML syntax the plain reader leaves to PyYAML
_YAML_START = tuple("[{|>&*!%@`")
_SCALARS: dict[str, Any] = {"true": True, "false": False, "null": None, "~": None, "": None}
# one item of a simple list (`tools: [Read, Grep]`, or `- Read` lines): a plain word such as a tool rule
_ITEM = re.compile(r"[A-Za-z_][\w.:*/()-]*")


class FrontMatterError(AgentTeamsError):
    """A front matter block that cannot be read: the message names the file and the line."""


@dataclass(frozen=True)
class MarkdownDoc:
    """A markdown file split into its front matter (`meta`) and its body (what follows the block)."""

    path: Path
    body: str
    meta: dict[str, Any] = field(default_factory=dict)

    def text(self, key: str) -> str | None:
        """A front matter value as text (None when absent or empty); YAML numbers and booleans as written."""
        value = self.meta.get(key)
        if value is None or value == "":
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        return value if isinstance(value, str) else str(value)


def read_markdown(path: Path) -> MarkdownDoc:
    """Read `path`; a file without a front matter block is all body. Raises OSError (unreadable) or
    FrontMatterError (an unclosed block, or YAML that does not parse into a mapping)."""
    text = path.read_text(encoding="utf-8-sig")
    return parse_markdown(text, path)


def parse_markdown(text: str, path: Path) -> MarkdownDoc:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != _FENCE:
        return MarkdownDoc(path, text)
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == _FENCE), None)
    if end is None:
        raise FrontMatterError(f"{path}:1: the front matter block opened by '---' is never closed")
    block = [line.rstrip("\r\n") for line in lines[1:end]]
    meta = _plain(block)
    if meta is None:
        meta = _yaml("\n".join(block) + "\n", path)
    return MarkdownDoc(path, "".join(lines[end + 1 :]).lstrip("\r\n"), meta)


def _plain(block: list[str]) -> dict[str, Any] | None:
    """The block as flat `key: value` pairs (a value may be a simple list of names), or None when it uses more of
    YAML than that."""
    meta: dict[str, Any] = {}
    listing: str | None = None  # the key with an empty value that `- item` lines below it fill
    for line in block:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") and listing is not None:
            if not _ITEM.fullmatch(item := stripped[2:].strip()):
                return None
            meta[listing] = [*(meta[listing] or []), item]
            continue
        match = _PLAIN.fullmatch(line)
        if match is None or line[0].isspace():
            return None
        key, value = match.group(1), (match.group(2) or "").strip()
        listing = key if not value else None
        if value.startswith("[") and value.endswith("]"):
            items = [i.strip() for i in value[1:-1].split(",")] if value[1:-1].strip() else []
            if not all(_ITEM.fullmatch(i) for i in items):
                return None
            meta[key] = items
            continue
        if value.startswith(_YAML_START) or " #" in value or "\t#" in value:
            return None
        if value[:1] in ("'", '"'):
            if len(value) < 2 or value[-1] != value[0] or value[0] in value[1:-1] or "\\" in value:
                return None
            meta[key] = value[1:-1]
            continue
        meta[key] = _scalar(value)
    return meta


def _scalar(value: str) -> Any:
    lowered = value.lower()
    if lowered in _SCALARS:
        return _SCALARS[lowered]
    if re.fullmatch(r"[-+]?\d+", value):
        return int(value)
    return value


def _yaml(block: str, path: Path) -> dict[str, Any]:
    import yaml  # only for front matter the plain reader cannot take (see the module docstring)

    try:
        data = yaml.safe_load(block)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 2}" if mark is not None else str(path)  # +1 for 0-based, +1 for the fence
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise FrontMatterError(f"{where}: the front matter is not valid YAML: {problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError(f"{path}:2: the front matter must be `key: value` lines, not a {type(data).__name__}")
    return {str(k): v for k, v in data.items()}
