"""Where each table and key of a TOML text is: tomllib parses but keeps no positions, and a team file's meaning errors
(an unknown key, a wrong type, a cycle) must still name their line. A small lexer, not a second parser."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Path = tuple[str | int, ...]  # ("role", 0, "name"): the first [[role]]'s name; ("team",): the [team] header
_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*(\]\]?)")
_KEY = re.compile(r"^\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*=")


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(p.strip().strip("\"'") for p in re.findall(r"\"[^\"]*\"|'[^']*'|[^.]+", dotted))


@dataclass
class _Scan:
    """The lexer's state between lines: inside a multi-line string, and how deep in brackets."""

    closing: str = ""  # the multi-line string delimiter we are inside, or ""
    depth: int = 0
    arrays: dict[tuple[str, ...], int] = field(default_factory=dict)  # [[x]] headers seen so far, per name

    def rest_of_line(self, text: str) -> None:
        """Follow strings and brackets through the rest of a line (a comment ends it)."""
        i = 0
        while i < len(text):
            if self.closing:
                end = text.find(self.closing, i)
                if end < 0:
                    return
                i, self.closing = end + 3, ""
                continue
            ch = text[i]
            if text.startswith(('"""', "'''"), i):
                self.closing, i = text[i : i + 3], i + 3
            elif ch in "\"'":
                i = _string_end(text, i)
            elif ch == "#":
                return
            else:
                self.depth += (ch in "[{") - (ch in "]}")
                i += 1


def _string_end(text: str, start: int) -> int:
    """The index after a one-line string that opens at `start` (escapes count in basic strings only)."""
    quote, i = text[start], start + 1
    while i < len(text) and text[i] != quote:
        i += 2 if quote == '"' and text[i] == "\\" else 1
    return i + 1


def key_lines(text: str) -> dict[Path, int]:
    """Each table header's and key's 1-based line, by path; a [[x]] table's path carries its index."""
    lines: dict[Path, int] = {}
    scan = _Scan()
    table: Path = ()
    for number, line in enumerate(text.splitlines(), start=1):
        if scan.closing or scan.depth > 0:
            scan.rest_of_line(line)
            continue
        header = _HEADER.match(line)
        if header and not _KEY.match(line):
            name = _parts(header.group(2))
            if header.group(1) == "[[":
                index = scan.arrays[name] = scan.arrays.get(name, -1) + 1
                table = (*name, index)
            else:
                table = name
            lines.setdefault(table, number)
            scan.rest_of_line(line[header.end() :])
            continue
        key = _KEY.match(line)
        if key:
            lines.setdefault((*table, *_parts(key.group(1))), number)
            scan.rest_of_line(line[key.end() :])
    return lines


def line_of(lines: dict[Path, int], path: Path) -> int:
    """The line of `path`, else of its nearest enclosing table or key that has one (1 for the file itself)."""
    for end in range(len(path), 0, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return 1
