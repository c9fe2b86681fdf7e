"""Permission decisions: the six modes, allow/ask/deny rules (flags and settings), session allow-always.

Pure logic: `PermissionPolicy.decide` says allow, deny or ask; asking the person is the UI's job.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, Protocol, TypeVar, cast

from agentteams.agent.permissions.bash_rules import command_covered, command_prefix, subcommands
from agentteams.agent.permissions.path_commands import (
    FILE_COMMANDS,
    PROTECTED_DIRS,
    is_file_command,
    is_read_only_command,
    named_paths,
    unknowable,
)
from agentteams.agent.permissions.web_rules import domain_covered, domain_rule_pattern
from agentteams.errors import AgentTeamsError
from agentteams.tools.mcp.names import rule_names
from agentteams.tools.runtime_hooks import PERMISSION_MODES, PermissionMode

Behavior = Literal["allow", "deny", "ask"]


class PermissionRuleError(AgentTeamsError):
    """A `--allowedTools` / `--disallowedTools` value or a permission mode that cannot be understood."""


class NamedTool(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...


T = TypeVar("T", bound=NamedTool)


@dataclass(frozen=True)
class Decision:
    behavior: Behavior
    reason: str


@dataclass(frozen=True)
class Rule:
    """`Edit` (the whole tool), `Bash(git:*)` (command prefix), `Bash(npm run test)`, `Read(~/**)` (path glob)."""

    tool: str
    pattern: str | None = None
    literal: bool = False  # the pattern is one exact path (session allow-always), not a glob
    origin: str = field(default="", compare=False)  # where it was given: a flag or a settings file
    root: str | None = field(default=None, compare=False)  # what `/path` is relative to: the settings' project

    def __str__(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"

    def names(self, tool_name: str, kind: str) -> bool:
        """Whether the rule is about this tool: `Edit(path)` covers every editing tool (Write too) and
        `Read(path)` every reading one, as Claude Code; a bare `Edit` names only Edit."""
        if tool_name == self.tool:
            return True
        covers_kind = (self.tool, kind) in (("Edit", "edit"), ("Read", "read"))
        return covers_kind and self.pattern is not None and not self.literal  # allow-always stays with its tool

    def covers(self, tool_name: str, kind: str, target: str | None, cwd: Path, *, deny: bool) -> bool:
        """Whether this rule applies to a call. A deny rule looks harder (every spelling, every subcommand)."""
        if not (self.names(tool_name, kind) or rule_names(self.tool, tool_name, deny=deny)):  # mcp__srv, mcp__srv__*
            return False
        if self.pattern is None:
            return True
        if target is None:
            return False
        if kind in ("execute", "web"):  # a command; a host (`domain:…`)
            return (command_covered if kind == "execute" else domain_covered)(self.pattern, target, deny=deny)
        return _path_covered(self, target, cwd, deny=deny)


def parse_mode(value: str) -> PermissionMode:
    if value in PERMISSION_MODES:
        return cast(PermissionMode, value)
    raise PermissionRuleError(f"unknown permission mode {value!r}; choose one of: {', '.join(PERMISSION_MODES)}")


def parse_rules(values: str | Iterable[str], origin: str = "") -> list[Rule]:
    """Rules from flag values, each comma- or space-separated; never split inside parentheses."""
    texts = [values] if isinstance(values, str) else list(values)
    rules: list[Rule] = []
    for text in texts:
        rules += [_parse_rule(token, origin) for token in _split_rule_list(text)]
    return rules


def parse_rule(text: str, origin: str = "", root: Path | None = None) -> Rule:
    """One rule as a settings file holds it (`Bash(npm run test)`: spaces inside are the rule's own);
    `root` is the directory a `/path` pattern is relative to (the settings file's project)."""
    rule = _parse_rule(text.strip(), origin)
    return rule if root is None else replace(rule, root=str(root))


def _split_rule_list(text: str) -> list[str]:
    tokens, current, depth = [], "", 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise PermissionRuleError(f"unbalanced ')' in permission rules {text!r}")
        if depth == 0 and (ch == "," or ch.isspace()):
            tokens.append(current)
            current = ""
        else:
            current += ch
    if depth:
        raise PermissionRuleError(f"unclosed '(' in permission rules {text!r}")
    return [t for t in (tok.strip() for tok in [*tokens, current]) if t]


def _parse_rule(token: str, origin: str = "") -> Rule:
    match = re.fullmatch(r"([A-Za-z_][\w.-]*\*?)(?:\((.*)\))?", token, re.DOTALL)
    if match is None:
        raise PermissionRuleError(f"cannot read permission rule {token!r}; use e.g. Edit, Bash(git:*) or Read(~/**)")
    tool, pattern = match.group(1), match.group(2)
    pattern = pattern.strip() if pattern is not None else None
    return Rule(tool, None if pattern in (None, "", "*") else pattern, origin=origin)


# -- commands ---------------------------------------------------------------------------------------------


def _all_parts_allowed(tool_name: str, command: str, rules: list[Rule], cwd: Path) -> bool:
    """A compound command (`a && b | c`) is allowed when each of its commands is allowed by some rule."""
    parts = subcommands(command)
    return len(parts) > 1 and all(any(r.covers(tool_name, "execute", p, cwd, deny=False) for r in rules) for p in parts)


# -- paths ------------------------------------------------------------------------------------------------


def _absolute(path: str, cwd: Path) -> str:
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


def _rule_path(rule: Rule, cwd: Path) -> str:
    """A rule's path pattern made absolute as Claude Code reads it: `//abs`, `~/home`, `/path` relative to
    the settings file's project, anything else relative to cwd."""
    assert rule.pattern is not None
    pattern = rule.pattern
    if rule.literal or pattern.startswith("~"):
        return _absolute(pattern, cwd)
    if pattern.startswith("//"):
        return os.path.normpath(pattern[1:])
    if pattern.startswith("/") and rule.root is not None:  # a flag's `/path` (no settings file) stays absolute
        return os.path.normpath(os.path.join(rule.root, pattern[1:]))
    return _absolute(pattern, cwd)


def _pattern_spellings(rule: Rule, cwd: Path) -> list[re.Pattern[str]]:
    """The rule's glob as written and with its fixed leading directories' symlinks resolved."""
    absolute = _rule_path(rule, cwd)
    if rule.literal:
        return [re.compile(re.escape(p)) for p in dict.fromkeys([absolute, os.path.realpath(absolute)])]
    parts = absolute.split("/")
    fixed = next((n for n, part in enumerate(parts) if any(c in part for c in "*?")), len(parts))
    base = "/".join(parts[:fixed]) or "/"
    real = os.path.join(os.path.realpath(base), *parts[fixed:])
    return [glob_regex(p) for p in dict.fromkeys([absolute, real])]


def _path_covered(rule: Rule, target: str, cwd: Path, *, deny: bool) -> bool:
    """Allow looks at the file that will really be touched; deny also at the path as written."""
    written = _absolute(target, cwd)
    candidates = [os.path.realpath(written), written] if deny else [os.path.realpath(written)]
    return any(rx.fullmatch(c) for rx in _pattern_spellings(rule, cwd) for c in candidates)


# -- the policy -------------------------------------------------------------------------------------------


@dataclass
class PermissionPolicy:
    mode: PermissionMode = "default"
    allowed: list[Rule] = field(default_factory=list)
    disallowed: list[Rule] = field(default_factory=list)
    cwd: Path = field(default_factory=Path.cwd)
    plan_file: Path | None = None
    interactive: bool = True
    session_rules: list[Rule] = field(default_factory=list)  # "allow always for this session"
    on_remember: Callable[[str, str | None, str | None], None] | None = None  # the transcript keeps each one
    asked: list[Rule] = field(default_factory=list)  # settings' `ask`: always ask, whatever the mode
    additional_dirs: list[Path] = field(default_factory=list)  # working directories beside cwd

    def decide(self, tool_name: str, kind: str, target: str | None = None) -> Decision:
        """Deny rules, the hard limits of plan and delegate mode, ask rules, allow rules, then the mode:
        deny over ask over allow, as Claude Code."""
        ruled = self.ruled(tool_name, kind, target)
        if ruled is not None:
            return ruled
        rules = [*self.allowed, *self.session_rules]
        if kind == "execute" and target and self._names_outside(target):  # only a bare `Bash` reaches out there
            rules = [r for r in rules if r.pattern is None]
        for rule in rules:
            if rule.covers(tool_name, kind, target, self.cwd, deny=False):
                source = "allowed for this session" if rule in self.session_rules else rule.origin or "--allowedTools"
                return Decision("allow", f"{tool_name} is allowed by the rule {rule} ({source})")
        if kind == "execute" and target and _all_parts_allowed(tool_name, target, rules, self.cwd):
            return Decision("allow", f"every command in it is allowed by {', '.join(map(str, rules))}")
        return self._by_mode(tool_name, kind, target)

    def ruled(self, tool_name: str, kind: str, target: str | None = None) -> Decision | None:
        """What a deny rule, plan or delegate mode's limit, an ask rule or a protected directory says of this call,
        if one applies: what no allow (a rule's, or a PreToolUse hook's) can lift."""
        for rule in self.disallowed:
            if rule.covers(tool_name, kind, target, self.cwd, deny=True):
                where = rule.origin or "--disallowedTools"
                return Decision("deny", f"{_call(tool_name, target)} is denied by the rule {rule} ({where})")
        if (hard := self._mode_limit(kind, target)) is not None:
            return Decision("deny", hard)
        for rule in self.asked:  # looked at as hard as a deny rule: a spelling must not skip the question
            if rule.covers(tool_name, kind, target, self.cwd, deny=True):
                why = f"{_call(tool_name, target)} asks first by the rule {rule} ({rule.origin or 'settings'})"
                if self.interactive:
                    return Decision("ask", why)
                return Decision("deny", f"{why}, and nobody can be asked in a non-interactive session")
        guard = self._protected_write(kind, target)  # a safety check no allow lifts (only bypassPermissions)
        if guard is not None:
            return self._nobody_to_ask(guard) if not self.interactive else Decision("ask", guard)
        return None

    def allows_by_rule(self, tool_name: str, kind: str, target: str | None) -> bool:
        """An allow rule (command line or session) names this call and no deny rule does."""
        if any(r.covers(tool_name, kind, target, self.cwd, deny=True) for r in [*self.disallowed, *self.asked]):
            return False
        return any(
            r.covers(tool_name, kind, target, self.cwd, deny=False) for r in [*self.allowed, *self.session_rules]
        )

    def _protected_write(self, kind: str, target: str | None) -> str | None:
        """Why this call needs a person whatever the rules say: it writes into .git, .claude and the like
        (bypassPermissions alone skips that, as Claude Code)."""
        if self.mode == "bypassPermissions" or not target:
            return None
        if kind == "edit":
            paths = [target]
        elif kind == "execute":
            named = [n for n in map(named_paths, subcommands(target)) if n is not None and n[0] in FILE_COMMANDS]
            paths = [p for _program, args in named for p in args]
        else:
            return None
        hit = next((p for p in paths if self._is_protected(p)), None)
        if hit is None:
            return None
        return f"{hit} is in a protected directory ({', '.join(sorted(PROTECTED_DIRS))}): it is never written unasked"

    def _is_protected(self, path: str) -> bool:
        if self._is_plan_file(path):
            return False
        real = os.path.realpath(_absolute(os.path.expanduser(path), self.cwd))
        roots = (os.path.realpath(_absolute(str(d), self.cwd)) for d in [self.cwd, *self.additional_dirs])
        root = next((r for r in roots if os.path.commonpath([real, r]) == r), "/")
        return any(part in PROTECTED_DIRS for part in os.path.relpath(real, root).split(os.sep))

    def _names_outside(self, command: str) -> bool:
        """Whether a path command in it (`touch`, `cat`...) names a path outside the working directories."""
        named = [n for n in map(named_paths, subcommands(command)) if n is not None]
        return any(unknowable(p) or not self.in_working_dirs(os.path.expanduser(p)) for _c, args in named for p in args)

    def _nobody_to_ask(self, why: str) -> Decision:
        return Decision("deny", f"{why}; nobody can be asked in a non-interactive session")

    def _mode_limit(self, kind: str, target: str | None) -> str | None:
        """Why plan or delegate mode refuses this call outright (no rule can lift it), or None."""
        if self.mode == "delegate" and kind != "coordinate":
            return "delegate mode: the lead only coordinates (tasks, messages, teammates); give this work to a teammate"
        if self.mode == "plan" and (kind == "execute" or (kind == "edit" and not self._is_plan_file(target))):
            where = f" (only the plan file {self.plan_file} may be written)" if self.plan_file else ""
            return f"plan mode is read-only until the plan is approved{where}; finish the plan and call ExitPlanMode"
        return None

    def _is_plan_file(self, target: str | None) -> bool:
        if target is None or self.plan_file is None:
            return False
        plan = _absolute(str(self.plan_file), self.cwd)
        linked = os.path.islink(plan) or os.path.islink(os.path.dirname(plan))  # a planted link leads outside the root
        return not linked and os.path.realpath(_absolute(target, self.cwd)) == os.path.realpath(plan)

    def in_working_dirs(self, target: str | None) -> bool:
        """Whether a path is under cwd or an additional directory (no path: nothing to be outside of)."""
        if target is None:
            return True
        real = os.path.realpath(_absolute(target, self.cwd))
        roots = [self.cwd, *self.additional_dirs]
        return any(
            os.path.commonpath([real, r]) == r for r in (os.path.realpath(_absolute(str(d), self.cwd)) for d in roots)
        )

    def _by_mode(self, tool_name: str, kind: str, target: str | None) -> Decision:
        # reads are free inside the working directories (cwd and additionalDirectories) only, as Claude Code;
        # acceptEdits accepts edits, and plain file commands (touch, mkdir, mv...), there too
        inside = kind not in ("read", "edit") or self.in_working_dirs(target) or self._is_plan_file(target)
        free = {"coordinate", "plan", *(("read",) if inside else ())}
        if self.mode == "bypassPermissions" or kind in free:
            return Decision("allow", f"{self.mode} mode allows {kind} tools")
        if kind == "execute" and target and self._reads_only(target):
            return Decision("allow", "a command that only reads in the working directories runs unasked")
        if self.mode == "acceptEdits" and self._accepts(kind, target, inside):
            return Decision("allow", f"acceptEdits mode allows {_ACTIONS.get(kind, kind)} in the working directories")
        if self.mode == "plan" and kind == "edit":  # `_mode_limit` let it through: it is the plan file
            return Decision("allow", "plan mode allows writing the plan file")
        if self.mode == "dontAsk":
            hint = self._hint(tool_name, kind, target)
            return Decision("deny", f"dontAsk mode denies what is not pre-approved; allow it with {hint}")
        if not self.interactive:
            return Decision(
                "deny",
                f"{tool_name} needs permission and nobody can be asked in a non-interactive session; "
                f"allow it with {self._hint(tool_name, kind, target)}",
            )
        return Decision("ask", f"{self.mode} mode asks before {_ACTIONS.get(kind, 'using ' + tool_name)}")

    def _reads_only(self, command: str) -> bool:
        def readable(path: str) -> bool:
            refused = [*self.disallowed, *self.asked]
            return self.in_working_dirs(path) and not any(
                r.covers("Read", "read", path, self.cwd, deny=True) for r in refused
            )

        parts = subcommands(command)
        return bool(parts) and all(is_read_only_command(p, readable) for p in parts)

    def _accepts(self, kind: str, target: str | None, inside: bool) -> bool:
        if kind == "edit":
            return inside
        if kind != "execute" or not target:
            return False
        parts = subcommands(target)
        return bool(parts) and all(is_file_command(p, self.in_working_dirs) for p in parts)

    def _hint(self, tool_name: str, kind: str, target: str | None) -> str:
        if kind == "execute" and target and (parts := subcommands(target)):
            rules = " ".join(f"{tool_name}({command_prefix(p)}:*)" for p in dict.fromkeys(parts))
            return f'--allowedTools "{rules}" or --permission-mode bypassPermissions'
        mode = "acceptEdits" if kind == "edit" else "bypassPermissions"
        return f'--allowedTools "{tool_name}" or --permission-mode {mode}'

    def remember(self, tool_name: str, target: str | None, kind: str | None = None) -> None:
        """Allow this tool again for the rest of the session: the same command prefix(es), or the same path.
        `kind` says how to read `target` (a command for "execute", else a path; by default a command
        for Bash only). The rules added are kept in `session_rules`."""
        if target is None:
            new = [Rule(tool_name)]
        elif (how := kind or {"Bash": "execute", "WebFetch": "web"}.get(tool_name, "path")) == "execute":
            new = [Rule(tool_name, f"{command_prefix(p)}:*") for p in dict.fromkeys(subcommands(target))]
        else:
            pattern = domain_rule_pattern(target) if how == "web" else _absolute(target, self.cwd)
            new = [Rule(tool_name, pattern, literal=how != "web")]
        self.session_rules += [r for r in new if r not in self.session_rules]
        if self.on_remember is not None:
            self.on_remember(tool_name, target, kind)


_ACTIONS = {"edit": "editing files", "execute": "running commands"}


def _call(tool_name: str, target: str | None) -> str:
    shown = " ".join((target or "").split())
    return f"{tool_name} `{shown if len(shown) <= 80 else shown[:77] + '...'}`" if shown else tool_name


def offered_tools(all_tools: Sequence[T], mode: str, disallowed: Sequence[Rule]) -> list[T]:
    """The tools the model is told about: delegate mode offers only coordination tools, and a bare
    tool name in `disallowed` hides that tool (a rule with a pattern only refuses matching calls)."""
    hidden = {r.tool for r in disallowed if r.pattern is None}
    return [t for t in all_tools if t.name not in hidden and (mode != "delegate" or t.kind == "coordinate")]
