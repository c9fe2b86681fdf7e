"""The agent command's line read without typer, as click would read it, for the lines a program or a person
usually types; a line it is not sure of (an unknown word, a bad value, --help, `--`, `-pc`) is left to typer,
whose answer (or error) is the reference. tests/cli/test_root_argv.py holds the two to the same result."""

from __future__ import annotations

from agentteams.cli.root_options import BOUNDS, DEFAULTS, PROMPT, TYPER_OWN, WORDS


def parse(argv: list[str]) -> dict[str, object] | None:
    """Each parameter's value, as typer hands them to the command; None: let typer read this line."""
    given: dict[str, object] = dict(DEFAULTS)
    lists: dict[str, list[str]] = {}
    rest = list(argv)
    prompt_seen = False
    while rest:
        word = rest.pop(0)
        if word == "--" or word in TYPER_OWN:
            return None
        if not word.startswith("-") or word == "-":
            if prompt_seen:
                return None  # click's "unexpected extra argument"
            given[PROMPT], prompt_seen = word, True
            continue
        name, eq, attached = word.partition("=") if word.startswith("--") else (word, "", "")
        known = WORDS.get(name)
        if known is None:
            return None  # an unknown option, or short ones run together: typer says what is wrong
        param, kind = known
        value = _value(param, kind, attached if eq else None, rest)
        if value is None:
            return None
        if kind == "texts":
            lists.setdefault(param, []).append(str(value))
        else:
            given[param] = value  # given twice: the last one counts, as click
    given.update(lists)
    return given


def _value(param: str, kind: str, attached: str | None, rest: list[str]) -> object | None:
    """The option's value (taking the next word when it needs one and none is attached); None: not as click would
    take it (a flag given a value, a value missing or out of bounds)."""
    if kind in ("flag", "unflag"):
        return None if attached is not None else kind == "flag"  # click: a flag takes no value
    if attached is None:
        if not rest:
            return None  # "requires an argument"
        attached = rest.pop(0)  # click takes the next word as the value, whatever it looks like
    return attached if kind != "int" else _bounded(attached, *BOUNDS.get(param, (None, None)))


def _bounded(text: str, least: int | None, most: int | None) -> int | None:
    try:
        number = int(text)  # as click: surrounding blanks and digit underscores are taken
    except ValueError:
        return None
    if (least is not None and number < least) or (most is not None and number > most):
        return None
    return number
