"""What one `agentteams` command gave (exit code, stdout, stderr) and the check of a command that must fail in one
line: exit 1, that line alone on stderr, nothing on stdout."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tests.support.cli import Cli


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def run(cli: Cli, *args: str) -> Result:
    proc = cli(*args)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def one_line_failure(result: Result) -> str:
    """Exit 1, and exactly one non-empty line on stderr; returns that line."""
    assert result.code == 1, result
    lines = result.err.splitlines()
    assert len(lines) == 1, result
    assert lines[0].strip(), result
    assert result.err == lines[0] + "\n", result
    return lines[0]


def error(cli: Cli, *args: str) -> str:
    """A command that must fail with `agentteams: error: <one line>` and print nothing on stdout."""
    result = run(cli, *args)
    line = one_line_failure(result)
    assert line.startswith("agentteams: error: "), line
    assert result.out == "", result
    return line
