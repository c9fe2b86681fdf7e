"""The CLI builds each typer app's click command once per process (cli.click_command): a fork server's children
parse their command line with the one it built."""

from __future__ import annotations

from typing import Any

import pytest
import typer
import typer.main

from agentteams import cli


def test_an_apps_command_is_built_once_and_parses_as_typer_would(monkeypatch: pytest.MonkeyPatch) -> None:
    app = typer.Typer()
    seen: list[str] = []

    @app.command()
    def hello(name: str = typer.Option("x", "--name")) -> None:
        seen.append(name)

    builds: list[typer.Typer] = []
    real = typer.main.get_command

    def counting(given: typer.Typer) -> Any:
        builds.append(given)
        return real(given)

    monkeypatch.setattr(typer.main, "get_command", counting)
    first = cli.click_command(app)
    assert cli.click_command(app) is first
    first(args=["--name", "a"], prog_name="t", standalone_mode=False)
    cli.click_command(app)(args=["--name", "b"], prog_name="t", standalone_mode=False)
    assert builds == [app] and seen == ["a", "b"]
