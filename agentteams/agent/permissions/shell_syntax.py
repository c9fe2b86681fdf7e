"""A Bash command line as the shell will run it, read with tree-sitter's bash grammar: the simple commands it
runs (also inside `$(…)`, `sh -c`, `eval`, `xargs`, `find -exec` and wrappers), the directory each runs in after
`cd`, what each redirects, and why any part cannot be judged before it runs. The only owner of tree-sitter."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING

from agentteams.agent.permissions.shell_commands import (
    SHELLS,
    STEERING_VARIABLES,
    WRAPPERS,
    Certainty,
    Redirect,
    ShellLine,
    SimpleCommand,
    Word,
    find_actions,
    script_of,
    unescape_double,
    unescape_word,
    worse,
    wrapped,
)

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

# statements that run some parts or others, or again: the commands inside are read, a rule does not approve them
_CONSTRUCTS = ("if_statement", "while_statement", "for_statement", "case_statement")
_CONDITIONALS = (*_CONSTRUCTS, "elif_clause", "else_clause", "case_item")
MAX_DEPTH = 4  # `sh -c "sh -c '…'"` nested deeper than this is not followed: such a line cannot be judged


@cache
def _parser() -> Parser:
    # imported here: only a Bash call that needs judging pays for loading the grammar (~30 ms)
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def read_line(command: str, cwd: str) -> ShellLine:
    """Read a command line that runs in `cwd` (absolute)."""
    reader = _Reader(command.encode())
    tree = _parser().parse(reader.source)
    if tree.root_node.has_error:
        reader.cannot_see("the command could not be parsed as Bash")
    reader.statements(tree.root_node, cwd, "", 0)
    return ShellLine(
        tuple(reader.commands),
        tuple(dict.fromkeys(reader.unclear)),
        tuple(dict.fromkeys(reader.hidden)),
        tuple(reader.beside),
    )


@dataclass
class _Reader:
    source: bytes
    commands: list[SimpleCommand] = field(default_factory=list)
    unclear: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    beside: list[str] = field(default_factory=list)

    def cannot_judge(self, reason: str) -> None:
        self.unclear.append(reason)

    def cannot_see(self, reason: str) -> None:
        self.unclear.append(reason)
        self.hidden.append(reason)

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode(errors="replace")

    # -- statements: each returns the directory the next statement runs in ----------------------------------

    def statements(self, node: Node, cwd: str | None, via: str, depth: int) -> str | None:
        kind = node.type
        if kind in ("program", "list", "compound_statement", "do_group"):
            return self._sequence(node, cwd, via, depth)
        if kind in ("subshell", "pipeline"):  # each part runs in a subshell: a `cd` there changes nothing after
            if kind == "subshell":
                self.cannot_judge(f"the subshell `{_short(self.text(node))}` needs approval")
            for child in node.named_children:
                self.statements(child, cwd, via, depth)
            return cwd
        if kind == "negated_command":
            return self.statements(node.named_children[0], cwd, via, depth)
        if kind == "redirected_statement":
            return self._redirected(node, cwd, via, depth)
        if kind == "command":
            return self._command(node, (), cwd, via, depth)
        if kind in _CONDITIONALS:
            if kind in _CONSTRUCTS:
                self.cannot_judge(f"the `{kind.split('_')[0]}` construct needs approval")
            return self._conditional(node, cwd, via, depth)
        return self._other(node, cwd, via, depth)

    def _sequence(self, node: Node, cwd: str | None, via: str, depth: int) -> str | None:
        """Statements one after another: a `cd` in one moves the ones after it."""
        if node.type == "compound_statement" and via != "function":
            self.cannot_judge(f"the command group `{_short(self.text(node))}` needs approval")
        for child in node.named_children:
            cwd = self.statements(child, cwd, via, depth)
        return cwd

    def _other(self, node: Node, cwd: str | None, via: str, depth: int) -> str | None:
        """Assignments, `export`/`local`/`unset`, `[[ … ]]`, comments; anything else cannot be seen into."""
        kind = node.type
        if kind in ("variable_assignment", "variable_assignments"):
            self.beside.append(self.text(node))
            assigned = [node] if kind == "variable_assignment" else node.named_children
            names = {self.text(n.child_by_field_name("name") or n).split("=")[0] for n in assigned}
            if names & STEERING_VARIABLES:  # `PATH=/tmp/x:$PATH; git status` runs another git
                self.cannot_judge(f"the assignment `{_short(self.text(node))}` changes what runs after it")
            self._assignment(node, cwd, depth)
        elif kind in ("declaration_command", "unset_command"):
            keyword = node.children[0]
            words = [Word(self.text(keyword), self.text(keyword))]
            words += [self._word(c, cwd, depth) for c in node.named_children]
            self.commands.append(SimpleCommand(tuple(words), cwd=cwd, via=via))
        elif kind == "test_command":
            self.beside.append(self.text(node))
            self._expressions(node, cwd, depth)
        elif kind not in ("comment", "heredoc_body", "heredoc_start", "heredoc_end"):
            if kind == "function_definition" and (body := node.child_by_field_name("body")) is not None:
                self.statements(body, cwd, "function", depth)  # what it would run, for the deny rules
            self.cannot_see(f"the shell construct `{_short(self.text(node))}` ({kind}) is not checked")
            return None
        return cwd

    def _conditional(self, node: Node, cwd: str | None, via: str, depth: int) -> str | None:
        """if/while/for/case: every branch is read as if it runs; after it, a `cd` inside may or may not have."""
        after = cwd
        for child in node.named_children:
            if child.type in ("variable_name", "word", "string", "raw_string", "concatenation", "simple_expansion",
                              "expansion", "command_substitution", "number"):  # fmt: skip
                self._word(child, cwd, depth)  # a `for x in …` list, a `case` subject or pattern
                continue
            if self.statements(child, cwd, via, depth) != cwd:
                after = None
        return after

    def _redirected(self, node: Node, cwd: str | None, via: str, depth: int) -> str | None:
        body = node.child_by_field_name("body")
        redirects, extra = self._redirects(node, cwd, depth)
        if body is None:
            return cwd
        if body.type == "command":
            return self._command(body, tuple(redirects), cwd, via, depth, extra_args=extra)
        start = len(self.commands)
        after = self.statements(body, cwd, via, depth)
        # a compound statement's redirection applies to each command in it
        for i in range(start, len(self.commands)):
            command = self.commands[i]
            self.commands[i] = replace(command, redirects=(*command.redirects, *redirects))
        if extra:
            self.cannot_judge(f"`{_short(self.text(node))}` has words after its redirection")
        return after

    def _redirects(self, node: Node, cwd: str | None, depth: int) -> tuple[list[Redirect], list[Word]]:
        redirects: list[Redirect] = []
        extra: list[Word] = []  # `echo > f hi`: the grammar hangs `hi` on the redirection; the shell passes it on
        for child in node.children_by_field_name("redirect"):
            if child.type == "file_redirect":
                operator = next((c.type for c in child.children if not c.is_named), "")
                targets = [self._word(t, cwd, depth) for t in child.children_by_field_name("destination")]
                if not targets:
                    self.cannot_judge(f"the redirection `{_short(self.text(child))}` is not checked")
                    continue
                target, extra = targets[0], [*extra, *targets[1:]]
                duplicate = operator in (">&", "<&", ">&-", "<&-") and (target.value or "").rstrip("-").isdigit()
                if duplicate or (operator in (">&", "<&") and target.value == "-"):
                    continue  # `2>&1`, `>&2`, `<&-`: file descriptors, no file
                redirects.append(Redirect(operator, target, writes=operator not in ("<", "<&")))
            elif child.type == "heredoc_redirect":
                start = next((c for c in child.children if c.type == "heredoc_start"), None)
                if start is None or not self.text(start).startswith(("'", '"', "\\")):
                    self.cannot_judge("a here-document with an unquoted delimiter is expanded by the shell")
                for part in child.named_children:
                    if part.type == "heredoc_body":
                        self._expressions(part, cwd, depth)  # a `$(…)` in an unquoted here-document runs
                    elif part.type in ("file_redirect", "pipeline", "list", "command"):
                        sub, more = self._redirects_of(part, cwd, depth)
                        redirects += sub
                        extra += more
            elif child.type == "herestring_redirect":
                for part in child.named_children:
                    self._word(part, cwd, depth)
            else:
                self.cannot_judge(f"the redirection `{_short(self.text(child))}` is not checked")
        return redirects, extra

    def _redirects_of(self, part: Node, cwd: str | None, depth: int) -> tuple[list[Redirect], list[Word]]:
        """A here-document's redirection or the pipeline after its start word (`cat <<E > f`, `cat <<E | sh`)."""
        if part.type == "file_redirect":
            operator = next((c.type for c in part.children if not c.is_named), "")
            targets = [self._word(t, cwd, depth) for t in part.children_by_field_name("destination")]
            if targets:
                return [Redirect(operator, targets[0], writes=operator not in ("<", "<&"))], targets[1:]
            return [], []
        self.cannot_see(f"`{_short(self.text(part))}` after a here-document is not checked")
        return [], []

    def _assignment(self, node: Node, cwd: str | None, depth: int) -> None:
        value = node.child_by_field_name("value")
        if value is not None:
            self._word(value, cwd, depth)  # a `$(…)` in it runs

    def _expressions(self, node: Node, cwd: str | None, depth: int) -> None:
        """Anything that holds words and may hold `$(…)`: each substitution in it is a command that runs."""
        for child in node.named_children:
            if child.type in ("command_substitution", "process_substitution"):
                self._word(child, cwd, depth)
            else:
                self._expressions(child, cwd, depth)

    # -- simple commands ---------------------------------------------------------------------------------------

    def _command(
        self,
        node: Node,
        redirects: tuple[Redirect, ...],
        cwd: str | None,
        via: str,
        depth: int,
        extra_args: list[Word] | None = None,
    ) -> str | None:
        assignments: list[str] = []
        words: list[Word] = []
        inner_redirects, inner_extra = self._redirects(node, cwd, depth)  # `echo hi >f` inside the command node
        for child in node.named_children:
            if child.type == "variable_assignment":
                self._assignment(child, cwd, depth)
                assignments.append(self.text(child))
            elif child.type == "command_name":
                words.append(self._word(child.named_children[0], cwd, depth) if child.named_children else Word("", ""))
            elif node.field_name_for_named_child(node.named_children.index(child)) == "argument":
                words.append(self._word(child, cwd, depth))
        words += [*inner_extra, *(extra_args or [])]
        command = SimpleCommand(tuple(words), tuple(assignments), (*redirects, *inner_redirects), cwd, via)
        self.commands.append(command)
        if words and words[0].certainty != "literal":
            self.cannot_see(f"the program `{words[0].written}` is decided by an expansion")
        self._inner(command, depth)
        return self._after_cd(command, cwd)

    def _after_cd(self, command: SimpleCommand, cwd: str | None) -> str | None:
        if command.program not in ("cd", "pushd", "popd"):
            return cwd
        args = [w for w in command.args() if not (w.value or "").startswith("-")]
        if command.program == "popd" or cwd is None or len(args) > 1:
            return None
        if not args:
            return os.path.expanduser("~")
        target = args[0].value
        if args[0].certainty != "literal" or target is None or target == "-":
            return None
        return os.path.normpath(os.path.join(cwd, os.path.expanduser(target)))

    def _inner(self, command: SimpleCommand, depth: int) -> None:
        """What a command runs in its turn: `sh -c STR`, `eval WORDS`, a wrapper's command, `find -exec`."""
        words, program = list(command.words), command.program
        if not words or program is None:
            return
        name = os.path.basename(program)
        if name in SHELLS or name == "eval":
            script = script_of(name, words[1:])
            if script is None:
                if name == "eval" or all((w.value or "-").startswith("-") for w in words[1:]):
                    self.cannot_see(f"`{_short(command.text)}` runs a script that cannot be read before it runs")
                return  # else `sh script.sh`: a file runs, which a rule for `sh` allows or not
            if depth >= MAX_DEPTH:
                self.cannot_see(f"`{_short(command.text)}` nests shells too deeply to check")
                return
            self._nested(script, command.cwd, f"{name} -c" if name != "eval" else "eval", depth + 1)
        elif name in WRAPPERS:
            inner = wrapped(name, words[1:])
            if inner:
                self.commands.append(replace(command, words=tuple(inner), assignments=(), via=name))
                if inner[0].certainty != "literal":
                    self.cannot_see(f"the program `{inner[0].written}` is decided by an expansion")
                self._inner(self.commands[-1], depth + 1)
        elif name == "find":
            for inner in find_actions(words[1:]):
                self.commands.append(replace(command, words=tuple(inner), assignments=(), redirects=(), via="find"))

    def _nested(self, script: str, cwd: str | None, via: str, depth: int) -> None:
        nested = _Reader(script.encode())
        tree = _parser().parse(nested.source)
        if tree.root_node.has_error:
            self.cannot_see(f"the script given to {via} could not be parsed as Bash")
        nested.statements(tree.root_node, cwd, via, depth)
        self.commands += nested.commands
        self.unclear += nested.unclear
        self.hidden += nested.hidden

    # -- words -------------------------------------------------------------------------------------------------

    def _word(self, node: Node, cwd: str | None, depth: int) -> Word:
        written = self.text(node)
        value, certainty = self._value(node, cwd, depth)
        return Word(written, value if certainty in ("literal", "glob") else None, certainty)

    def _value(self, node: Node, cwd: str | None, depth: int) -> tuple[str, Certainty]:
        kind = node.type
        if kind == "word":
            return unescape_word(self.text(node))
        if kind in ("number", "variable_name"):
            return self.text(node), "literal"
        if kind == "raw_string":
            return self.text(node)[1:-1], "literal"
        if kind in ("string", "concatenation", "variable_assignment"):
            return self._joined(node, cwd, depth)
        if kind == "simple_expansion":
            return self.text(node), "variable"
        if kind in ("command_substitution", "process_substitution"):
            for child in node.named_children:
                self.statements(child, cwd, "$(…)" if kind == "command_substitution" else "<(…)", depth)
            return self.text(node), "unknown"
        # `${…}` can assign, indirect or run (`${x@P}`), `$((…))` can run what a variable names; `$"…"`, `$'…'` and a
        # bare `$` are left to the shell too: none is judged (a `$(…)` inside still is, as a command)
        self._expressions(node, cwd, depth)
        return self.text(node), "unknown"

    def _joined(self, node: Node, cwd: str | None, depth: int) -> tuple[str, Certainty]:
        """A word made of parts: `"a $X"` (a glob in quotes is text), `pre{a,b}$X`, `NAME=value` (`export A=1`)."""
        if node.type == "variable_assignment":
            name, assigned = node.child_by_field_name("name"), node.child_by_field_name("value")
            known, certainty = self._value(assigned, cwd, depth) if assigned is not None else ("", "literal")
            return f"{self.text(name) if name else ''}={known}", certainty
        quoted = node.type == "string"
        parts: list[str] = []
        worst: Certainty = "literal"
        for child in node.named_children if quoted else node.children:
            if quoted and child.type == "string_content":
                parts.append(unescape_double(self.text(child)))
                continue
            value, certainty = self._value(child, cwd, depth)
            parts.append(value)
            worst = worse(worst, "variable" if quoted and certainty == "glob" else certainty)
            if not quoted and child.type == "word" and self.text(child) in ("{", "}"):
                worst = worse(worst, "glob")  # brace expansion: `w{1,2}` is two words
        return "".join(parts), worst


def _short(text: str) -> str:
    shown = " ".join(text.split())
    return shown if len(shown) <= 60 else shown[:57] + "..."
