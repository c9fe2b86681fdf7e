"""`agentteams status` without typer (cli/status_show.py): a plain line reads as typer reads it, anything else is
left to typer, and a piped status imports neither typer nor rich."""

from __future__ import annotations

import pytest

from agentteams import cli
from agentteams.cli import status_show
from agentteams.cli.status_show import StatusArgs
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.paths import Layout
from tests.support.cli import Cli
from tests.support.procs import child_env
from tests.support.task_board import write_board

PLAIN = [[], ["t"], ["--json"], ["t", "--all"], ["--all", "t", "--json"], ["--json", "--json"], [""]]
FOR_TYPER = [["--help"], ["-h"], ["a", "b"], ["--bogus"], ["t", "--"], ["--all=1"], ["-j"]]


def _by_typer(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> StatusArgs:
    from agentteams.cli.commands import status

    seen: list[StatusArgs] = []
    monkeypatch.setattr(status_show, "show", seen.append)
    cli.click_command(status.app)(args=argv, prog_name="agentteams status", standalone_mode=False)
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize("argv", PLAIN)
def test_a_plain_line_reads_as_typer_reads_it(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    ours = status_show.parse(argv)
    assert ours is not None, "a plain line was left to typer"
    assert ours == _by_typer(argv, monkeypatch)


@pytest.mark.parametrize("argv", FOR_TYPER)
def test_any_other_line_is_left_to_typer(argv: list[str]) -> None:
    assert status_show.parse(argv) is None


def test_a_piped_status_imports_neither_typer_nor_rich(cli: Cli, layout: Layout) -> None:
    TeamStore(layout).create("proj")
    TeamStore(layout).add_member("proj", NewMember(name="alice"))
    write_board(layout, "proj", [{"subject": "one"}])
    env = child_env(layout.root) | {"AGENTTEAMS_NO_WARM": "1", "PYTHONPROFILEIMPORTTIME": "1"}
    env.pop("FORCE_COLOR", None)
    env.pop("TTY_COMPATIBLE", None)
    proc = cli("status", "proj", env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "#1 [pending] one" in proc.stdout
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
    assert "agentteams" in imported, proc.stderr[-2000:]  # the import times were written: the check can fail
    assert not imported & {"typer", "click", "rich"}, sorted(imported & {"typer", "click", "rich"})


def test_help_and_a_wrong_line_go_through_typer(cli: Cli) -> None:
    shown = cli("status", "--help")
    assert shown.returncode == 0 and "--all" in shown.stdout and "--json" in shown.stdout, shown
    wrong = cli("status", "a", "b")
    assert wrong.returncode == 1 and wrong.stderr.startswith("agentteams: error: "), wrong
    assert len(wrong.stderr.splitlines()) == 1, wrong.stderr
