"""`agentteams config [list] [--json]`: the merged settings for this directory and, for each value, the file it came
from; `config get KEY` prints one value. Claude Code 2.1.332 has no `config` command (its older `set`, `add` and
`remove` are gone): those say so in one line."""

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command(context_settings={"help_option_names": ["-h", "--help"]})
def config(
    action: Annotated[str | None, typer.Argument(help="list (the default), or get KEY.")] = None,
    key: Annotated[str | None, typer.Argument(help="The key for get (dotted: permissions.allow).")] = None,
    more: Annotated[list[str] | None, typer.Argument(hidden=True)] = None,  # claude's old `config set K V`: refused
    settings: Annotated[
        str | None, typer.Option("--settings", help="Also a settings file or JSON, as the agent.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show the settings in effect here (user, project, local, --settings, managed merged) and where each came from."""
    import json

    from agentteams import diagnostics
    from agentteams.settings.describe import format_rows, masked_settings, setting_rows
    from agentteams.settings.load import load_settings, paths_for

    found = load_settings(Path.cwd(), flag=settings)
    if action not in (None, "list", "ls", "get"):
        typer.echo(
            f"agentteams config {action}: claude 2.1.332 has no `config {action}`: edit the settings file "
            "(~/.claude/settings.json, .claude/settings.json, .claude/settings.local.json)",
            err=True,
        )
        raise typer.Exit(1)
    if action == "get":
        _get(masked_settings(found), key, as_json)
        return
    rows = setting_rows(found)
    if as_json:
        files = {scope: str(p) for scope, p in paths_for(Path.cwd()).items()}
        out = {"settings": masked_settings(found), "values": [r.to_json() for r in rows], "files": files,
               "problems": list(found.problems)}  # fmt: skip
        typer.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return
    for problem in found.problems:
        diagnostics.warning("%s", problem)
    for line in format_rows(rows):
        typer.echo(line)


def _get(merged: dict[str, object], key: str | None, as_json: bool) -> None:
    """One setting's value in effect (secrets masked, as `config` shows them); exit 1 when it is not set."""
    import json

    if not key:
        typer.echo("agentteams config get: name a key (e.g. model, permissions.allow)", err=True)
        raise typer.Exit(1)
    value: object = merged
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            typer.echo(f"agentteams config get: {key} is not set here", err=True)
            raise typer.Exit(1)
        value = value[part]
    typer.echo(value if isinstance(value, str) and not as_json else json.dumps(value, indent=2, ensure_ascii=False))
