"""Path permission rules as Claude Code reads them: `Read(src/**)` relative to the cwd, `Edit(/docs/**)` to the
settings file's project, `//abs/path`, `~/home/path`; gitignore-style globs matched against the file really
touched (and, for a deny rule, the path as written too)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Protocol


class PathRule(Protocol):
    """What a path rule needs of a rule: its pattern, whether it is one exact path, and its settings' project."""

    @property
    def pattern(self) -> str | None: ...

    @property
    def literal(self) -> bool: ...

    @property
    def root(self) -> str | None: ...


def absolute(path: str, cwd: Path) -> str:
    expanded = os.path.expanduser(path)
    return os.path.normpath(expanded if os.path.isabs(expanded) else os.path.join(cwd, expanded))


def glob_regex(pattern: str) -> re.Pattern[str]:
    """`**` spans directories (`dir/**` also matches `dir`), `*` and `?` stay inside one name."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("/**", i) and i + 3 == len(pattern):
            out, i = out + "(?:/.*)?", i + 3
        elif pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        else:
            out += {"*": "[^/]*", "?": "[^/]"}.get(pattern[i], re.escape(pattern[i]))
            i += 1
    return re.compile(out, re.DOTALL)


def _rule_path(rule: PathRule, cwd: Path) -> str:
    """A rule's path pattern made absolute as Claude Code reads it: `//abs`, `~/home`, `/path` relative to
    the settings file's project, anything else relative to cwd."""
    assert rule.pattern is not None
    pattern = rule.pattern
    if rule.literal or pattern.startswith("~"):
        return absolute(pattern, cwd)
    if pattern.startswith("//"):
        return os.path.normpath(pattern[1:])
    if pattern.startswith("/") and rule.root is not None:  # a flag's `/path` (no settings file) stays absolute
        return os.path.normpath(os.path.join(rule.root, pattern[1:]))
    return absolute(pattern, cwd)


def _pattern_spellings(rule: PathRule, cwd: Path) -> list[re.Pattern[str]]:
    """The rule's glob as written and with its fixed leading directories' symlinks resolved."""
    absolute = _rule_path(rule, cwd)
    if rule.literal:
        return [re.compile(re.escape(p)) for p in dict.fromkeys([absolute, os.path.realpath(absolute)])]
    parts = absolute.split("/")
    fixed = next((n for n, part in enumerate(parts) if any(c in part for c in "*?")), len(parts))
    base = "/".join(parts[:fixed]) or "/"
    real = os.path.join(os.path.realpath(base), *parts[fixed:])
    return [glob_regex(p) for p in dict.fromkeys([absolute, real])]


def path_covered(rule: PathRule, target: str, cwd: Path, *, deny: bool) -> bool:
    """Allow looks at the file that will really be touched; deny also at the path as written."""
    written = absolute(target, cwd)
    candidates = [os.path.realpath(written), written] if deny else [os.path.realpath(written)]
    return any(rx.fullmatch(c) for rx in _pattern_spellings(rule, cwd) for c in candidates)
