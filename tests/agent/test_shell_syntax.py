"""The Bash reader: the simple commands a line runs (also nested), their redirections, where each runs after `cd`,
and the parts that cannot be judged before the line runs."""

from __future__ import annotations

import pytest

from agentteams.agent.permissions.shell_commands import ShellLine
from agentteams.agent.permissions.shell_syntax import read_line

CWD = "/w/repo"


def texts(line: ShellLine) -> list[str]:
    return [c.text for c in line.commands]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("a && b || c; d | e & f\ng", ["a", "b", "c", "d", "e", "f", "g"]),
        ("echo 'x; y' \"p | q\"", ["echo 'x; y' \"p | q\""]),
        ('git commit -m "$(cat msg)"', ["cat msg", 'git commit -m "$(cat msg)"']),
        ("echo `date`  ok", ["date", "echo `date` ok"]),
        ("make 2>&1 &> log | tail & wait", ["make", "tail", "wait"]),
        ("(cd x && rm y); { touch z; }", ["cd x", "rm y", "touch z"]),
        ("if [ -f x ]; then rm x; else touch y; fi", ["rm x", "touch y"]),
        ("for f in a b; do rm $f; done", ["rm $f"]),
        ("diff <(ls) >(cat)", ["ls", "cat", "diff <(ls) >(cat)"]),
    ],
)
def test_the_simple_commands_of_a_line(command: str, expected: list[str]) -> None:
    assert texts(read_line(command, CWD)) == expected


@pytest.mark.parametrize(
    ("command", "inner", "via"),
    [
        ("sh -c 'rm x; touch y'", ["rm x", "touch y"], "sh -c"),
        ('bash -lc "rm x"', ["rm x"], "bash -c"),
        ("eval rm x", ["rm x"], "eval"),
        ("timeout 5 nice -n 3 env A=1 rm -rf x", ["rm -rf x"], "env"),
        ("sudo -u root rm x", ["rm x"], "sudo"),
        ("echo x | xargs -n1 rm", ["rm"], "xargs"),
        ("find . -name '*.o' -exec rm {} \\;", ["rm {}"], "find"),
        ("echo $(sh -c 'rm x')", ["rm x"], "sh -c"),
    ],
)
def test_what_a_wrapper_or_a_shell_runs_is_read_too(command: str, inner: list[str], via: str) -> None:
    line = read_line(command, CWD)
    found = [c for c in line.commands if c.via == via]
    assert [c.text for c in found][-len(inner) :] == inner
    assert not line.unclear


def test_redirections_of_every_kind() -> None:
    line = read_line("a > o1; b >> o2; c 2> o3; d &> o4; e >| o5; f < i1; g 2>&1 >/dev/null; h >&2", CWD)
    seen = {(c.program, r.operator, r.target.value, r.writes) for c in line.commands for r in c.redirects}
    assert seen == {
        ("a", ">", "o1", True), ("b", ">>", "o2", True), ("c", ">", "o3", True), ("d", "&>", "o4", True),
        ("e", ">|", "o5", True), ("f", "<", "i1", False), ("g", ">", "/dev/null", True),
    }  # fmt: skip


def test_a_here_document_its_redirection_and_what_runs_in_it() -> None:
    line = read_line("cat <<EOF > out.txt\nhi $(touch pwned)\nEOF", CWD)
    assert texts(line) == ["touch pwned", "cat"]
    assert [(r.operator, r.target.value) for r in line.commands[1].redirects] == [(">", "out.txt")]


def test_words_after_a_redirection_are_still_arguments() -> None:
    [command] = read_line("echo > f hi there", CWD).commands
    assert command.text == "echo hi there"
    assert [r.target.value for r in command.redirects] == ["f"]


def test_cd_moves_the_commands_after_it_but_not_out_of_a_subshell() -> None:
    line = read_line("cd src && touch a; (cd .. && touch b); touch c; cd $X; touch d", CWD)
    where = {c.text: c.cwd for c in line.commands}
    assert where == {
        "cd src": CWD, "touch a": f"{CWD}/src", "cd ..": f"{CWD}/src", "touch b": CWD, "touch c": f"{CWD}/src",
        "cd $X": f"{CWD}/src", "touch d": None,
    }  # fmt: skip


def test_a_cd_inside_a_branch_leaves_the_directory_unknown() -> None:
    line = read_line("if true; then cd sub; fi; rm x", CWD)
    assert line.commands[-1].cwd is None


@pytest.mark.parametrize(
    ("command", "certainties"),
    [
        ("echo plain 'q' \"d\" a\\ b", ["literal"] * 5),
        ("echo $HOME", ["literal", "variable"]),
        ('echo "$HOME/x"', ["literal", "variable"]),
        ("echo ${HOME}", ["literal", "unknown"]),
        ("echo $(id)", ["literal", "unknown"]),
        ("echo *.py w{1,2}", ["literal", "glob", "glob"]),
        ("echo $((1+2))", ["literal", "unknown"]),
        ("echo ~/x ~root/x", ["literal", "literal", "variable"]),
    ],
)
def test_which_words_are_known_before_the_line_runs(command: str, certainties: list[str]) -> None:
    [*_, command_read] = read_line(command, CWD).commands
    assert [w.certainty for w in command_read.words] == certainties


def test_quotes_and_escapes_are_removed_from_values() -> None:
    [command] = read_line('touch \'a b\' "c\\"d" e\\ f', CWD).commands
    assert [w.value for w in command.words] == ["touch", "a b", 'c"d', "e f"]


@pytest.mark.parametrize(
    "command",
    [
        'echo "unterminated',
        "f() { rm x; }; f",
        "$CMD x",
        "echo x | bash",
        "eval $X",
        'sh -c "$SCRIPT"',
        "env $PROG x",
    ],
)
def test_what_cannot_be_judged_says_so(command: str) -> None:
    assert read_line(command, CWD).unclear
