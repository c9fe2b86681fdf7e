"""Permission decisions: the six modes, allow/ask/deny rules (flags and settings), session allow-always. Pure logic:
`PermissionPolicy.decide` says allow, deny or ask; asking the person is the UI's job."""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, cast

from agentteams.agent.permissions.path_rules import absolute, path_covered
from agentteams.agent.permissions.web_rules import domain_covered, domain_rule_pattern
from agentteams.errors import AgentTeamsError
from agentteams.tools.mcp.names import rule_names
from agentteams.tools.runtime_hooks import PERMISSION_MODES, PermissionMode


class _Later:
    """A module imported at its first use."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


if TYPE_CHECKING:
    from agentteams.agent.permissions import bash_judge, bash_rules, path_commands
    from agentteams.agent.permissions.shell_commands import ShellLine
else:  # the shell's parser and judges (~5 ms) load at the first command or path judged, not at a session's start
    bash_judge, bash_rules, path_commands = (_Later(f"agentteams.agent.permissions.{m}")
                                             for m in ("bash_judge", "bash_rules", "path_commands"))  # fmt: skip

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
        if kind == "execute":  # a command: a deny rule looks at every part; allowing is the policy's to judge
            return bash_rules.command_covered(self.pattern, bash_judge.line_of(target, str(cwd)), deny=deny)
        if kind == "web":  # a host (`domain:…`)
            return domain_covered(self.pattern, target, deny=deny)
        return path_covered(self, target, cwd, deny=deny)


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


TOOL_ALIASES = {"Agent": "Task"}  # Claude Code's two names of its subagent tool (ours is named Task)


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
    tool = TOOL_ALIASES.get(tool, tool)  # a rule for either name of the subagent tool holds for it
    pattern = pattern.strip() if pattern is not None else None
    return Rule(tool, None if pattern in (None, "", "*") else pattern, origin=origin)


# -- commands ---------------------------------------------------------------------------------------------


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
    confined: bool = False  # --restricted: the file tools never reach outside the working directories

    def decide(self, tool_name: str, kind: str, target: str | None = None) -> Decision:
        """Deny rules, the hard limits of plan and delegate mode, ask rules, allow rules, then the mode:
        deny over ask over allow, as Claude Code."""
        ruled = self.ruled(tool_name, kind, target)
        if ruled is not None:
            return ruled
        rules = [*self.allowed, *self.session_rules]
        if kind == "execute" and target:
            allowed, why = self._command_allowed(tool_name, target, rules)
            return allowed or self._by_mode(tool_name, kind, target, why)
        for rule in rules:
            if rule.covers(tool_name, kind, target, self.cwd, deny=False):
                return Decision("allow", f"{tool_name} is allowed by the rule {rule} ({self._source(rule)})")
        return self._by_mode(tool_name, kind, target)

    def _source(self, rule: Rule) -> str:
        return "allowed for this session" if rule in self.session_rules else rule.origin or "--allowedTools"

    def _command_allowed(self, tool_name: str, command: str, rules: list[Rule]) -> tuple[Decision | None, str | None]:
        """A bare `Bash` rule allows any command; rules with patterns allow a line when every part of it is
        allowed and nothing in it escapes them. Else the reason they fall short (the mode decides)."""
        naming = [r for r in rules if r.names(tool_name, "execute")]
        bare = next((r for r in naming if r.pattern is None), None)
        if bare is not None:
            return Decision("allow", f"{tool_name} is allowed by the rule {bare} ({self._source(bare)})"), None
        patterns = [r for r in naming if r.pattern is not None]
        if not patterns:
            return None, None
        line = bash_judge.line_of(command, str(self.cwd))
        used: list[Rule] = []

        def allowed(text: str) -> bool:
            rule = next((r for r in patterns if bash_rules.command_matches(r.pattern or "", text)), None)
            used.extend([rule] if rule is not None else [])
            return rule is not None

        why = bash_judge.why_rules_fall_short(line, allowed, self._places())
        if why is not None:
            return None, why
        shown = ", ".join(f"{r} ({self._source(r)})" for r in dict.fromkeys(used)) or "the read-only commands"
        return Decision("allow", f"every command in it is allowed: {shown}"), None

    def _places(self) -> bash_judge.Places:
        roots = tuple(os.path.realpath(absolute(str(d), self.cwd)) for d in [self.cwd, *self.additional_dirs])
        refused = [*self.disallowed, *self.asked]

        def readable(path: str) -> bool:
            return not any(r.covers("Read", "read", path, self.cwd, deny=True) for r in refused)

        def editable(path: str) -> bool:
            allowing = [*self.allowed, *self.session_rules]
            return any(r.pattern is not None and r.covers("Edit", "edit", path, self.cwd, deny=False) for r in allowing)

        return bash_judge.Places(str(self.cwd), roots, os.path.expanduser("~"), readable, editable)

    def _files_ruled(self, tool_name: str, command: str, rules: list[Rule]) -> str | None:
        """A Read or Edit rule among `rules` that names a file the command reads or writes, as Claude Code
        applies them to Bash too (`Edit(./dist/**)` denied: `touch dist/x` is too)."""
        for kind, _cmd, path in bash_judge.paths_touched(bash_judge.line_of(command, str(self.cwd)), self._places()):
            tools = ("Edit", "Write") if kind == "edit" else ("Read",)
            for rule in rules:
                if any(rule.covers(t, kind, path, self.cwd, deny=True) for t in tools):
                    verb = "writes" if kind == "edit" else "reads"
                    where = rule.origin or "settings"
                    return f"{_call(tool_name, command)} {verb} {path}, which the rule {rule} ({where}) names"
        return None

    def ruled(self, tool_name: str, kind: str, target: str | None = None) -> Decision | None:
        """What a deny rule, plan or delegate mode's limit, an ask rule or a protected directory says of this call,
        if one applies: what no allow (a rule's, or a PreToolUse hook's) can lift."""
        for rule in self.disallowed:
            if rule.covers(tool_name, kind, target, self.cwd, deny=True):
                where = rule.origin or "--disallowedTools"
                return Decision("deny", f"{_call(tool_name, target)} is denied by the rule {rule} ({where})")
        if kind == "execute" and target and (named := self._files_ruled(tool_name, target, self.disallowed)):
            return Decision("deny", f"Permission denied: {named}")
        if (hard := self._mode_limit(kind, target)) is not None:
            return Decision("deny", hard)
        if self.confined and kind in ("read", "edit") and not self.in_working_dirs(target):
            roots = ", ".join(str(d) for d in [self.cwd, *self.additional_dirs])
            return Decision("deny", f"{target} is outside {roots}; --restricted keeps the file tools to the "
                            "working directories")  # fmt: skip
        for rule in self.asked:  # looked at as hard as a deny rule: a spelling must not skip the question
            if rule.covers(tool_name, kind, target, self.cwd, deny=True):
                why = f"{_call(tool_name, target)} asks first by the rule {rule} ({rule.origin or 'settings'})"
                if self.interactive:
                    return Decision("ask", why)
                return Decision("deny", f"{why}, and nobody can be asked in a non-interactive session")
        if kind == "execute" and target and (named := self._files_ruled(tool_name, target, self.asked)):
            return self._nobody_to_ask(named) if not self.interactive else Decision("ask", named)
        if kind == "execute" and target and (hidden := self._hidden_from_rules(tool_name, target)) is not None:
            return self._nobody_to_ask(hidden) if not self.interactive else Decision("ask", hidden)
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

    def _hidden_from_rules(self, tool_name: str, command: str) -> str | None:
        """Why a deny or ask rule for commands cannot be sure it does not apply: part of the line is known only
        when it runs (`$CMD x`, `eval "$S"`, a line that does not parse)."""
        hidden = bash_judge.line_of(command, str(self.cwd)).hidden
        rules = [r for r in [*self.disallowed, *self.asked] if r.pattern is not None and r.names(tool_name, "execute")]
        if not hidden or not rules:
            return None
        return f"{hidden[0]}, so the rule {rules[0]} ({rules[0].origin or 'settings'}) cannot be checked"

    def _protected_write(self, kind: str, target: str | None) -> str | None:
        """Why this call needs a person whatever the rules say: it writes into .git, .claude, a shell's start-up
        file and the like (bypassPermissions alone skips that, as Claude Code)."""
        if self.mode == "bypassPermissions" or not target:
            return None
        if kind == "execute":
            return bash_judge.protected_write(bash_judge.line_of(target, str(self.cwd)), self._places())
        if kind != "edit" or self._is_plan_file(target):
            return None
        real = os.path.realpath(absolute(target, self.cwd))
        return path_commands.protected_reason(real, self._places().root_of(real), os.path.expanduser("~"))

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
        plan = absolute(str(self.plan_file), self.cwd)
        linked = os.path.islink(plan) or os.path.islink(os.path.dirname(plan))  # a planted link leads outside the root
        return not linked and os.path.realpath(absolute(target, self.cwd)) == os.path.realpath(plan)

    def in_working_dirs(self, target: str | None) -> bool:
        """Whether a path is under cwd or an additional directory (no path: nothing to be outside of)."""
        if target is None:
            return True
        real = os.path.realpath(absolute(target, self.cwd))
        roots = [self.cwd, *self.additional_dirs]
        return any(
            os.path.commonpath([real, r]) == r for r in (os.path.realpath(absolute(str(d), self.cwd)) for d in roots)
        )

    def _by_mode(self, tool_name: str, kind: str, target: str | None, why: str | None = None) -> Decision:
        # reads are free inside the working directories (cwd and additionalDirectories) only, as Claude Code;
        # acceptEdits accepts edits, and plain file commands (touch, mkdir, mv...), there too
        inside = kind not in ("read", "edit") or self.in_working_dirs(target) or self._is_plan_file(target)
        free = {"coordinate", "plan", *(("read",) if inside else ())}
        if self.mode == "bypassPermissions" or kind in free:
            return Decision("allow", f"{self.mode} mode allows {kind} tools")
        line = bash_judge.line_of(target, str(self.cwd)) if kind == "execute" and target else None
        if line is not None and bash_judge.only_reads(line, self._places()):
            return Decision("allow", "a command that only reads in the working directories runs unasked")
        if self.mode == "acceptEdits" and self._accepts(kind, line, inside):
            return Decision("allow", f"acceptEdits mode allows {_ACTIONS.get(kind, kind)} in the working directories")
        if self.mode == "plan" and kind == "edit":  # `_mode_limit` let it through: it is the plan file
            return Decision("allow", "plan mode allows writing the plan file")
        first = f"{why}; " if why else ""
        if self.mode == "dontAsk":
            hint = self._hint(tool_name, kind, line)
            return Decision("deny", f"{first}dontAsk mode denies what is not pre-approved; allow it with {hint}")
        if not self.interactive:
            return Decision(
                "deny",
                f"{first}{tool_name} needs permission and nobody can be asked in a non-interactive session; "
                f"allow it with {self._hint(tool_name, kind, line)}",
            )
        return Decision("ask", why or f"{self.mode} mode asks before {_ACTIONS.get(kind, 'using ' + tool_name)}")

    def _accepts(self, kind: str, line: ShellLine | None, inside: bool) -> bool:
        if kind == "edit":
            return inside
        return line is not None and bash_judge.accepts_edits(line, self._places())

    def _hint(self, tool_name: str, kind: str, line: ShellLine | None) -> str:
        if kind == "execute" and line is not None and (parts := bash_judge.top_level_texts(line)):
            rules = " ".join(f"{tool_name}({bash_rules.command_prefix(p)}:*)" for p in parts)
            return f'--allowedTools "{rules}" or --permission-mode bypassPermissions'
        mode = "acceptEdits" if kind == "edit" else "bypassPermissions"
        return f'--allowedTools "{tool_name}" or --permission-mode {mode}'

    def accept_edits_from_now(self) -> None:
        """The person answered "yes, and don't ask again" to an edit: acceptEdits for the rest of the session
        (from the default mode only: a stricter or looser mode the person chose stays)."""
        if self.mode == "default":
            self.mode = "acceptEdits"

    def remember(self, tool_name: str, target: str | None, kind: str | None = None) -> None:
        """Allow this tool again for the rest of the session: the same command prefix(es), or the same path.
        `kind` says how to read `target` (a command for "execute", else a path; by default a command
        for Bash only). The rules added are kept in `session_rules`."""
        if target is None:
            new = [Rule(tool_name)]
        elif (how := kind or {"Bash": "execute", "WebFetch": "web"}.get(tool_name, "path")) == "execute":
            texts = bash_judge.top_level_texts(bash_judge.line_of(target, str(self.cwd))) or [target]
            new = [Rule(tool_name, f"{bash_rules.command_prefix(p)}:*") for p in texts]
        else:
            pattern = domain_rule_pattern(target) if how == "web" else absolute(target, self.cwd)
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
