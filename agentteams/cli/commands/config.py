"""`agentteams config [--json]`: the merged settings for this directory and, for each value, the file it came from."""

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command()
def config(
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
