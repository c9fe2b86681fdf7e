"""`agentteams agents [--json] [--all] [--cwd PATH]`: the background sessions of this machine, ours and the real
claude's (`jobs/<id>/state.json` under the config root), with the state each is in now."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from agentteams.run import background
    from agentteams.store.paths import Layout

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command(context_settings={"help_option_names": ["-h", "--help"]})
def agents(
    as_json: Annotated[bool, typer.Option("--json", help="Print the sessions as a JSON array and exit.")] = False,
    include_done: Annotated[bool, typer.Option("--all", help="Also list sessions that have ended.")] = False,
    cwd: Annotated[Path | None, typer.Option("--cwd", help="Only sessions started under this directory.")] = None,
) -> None:
    """List background sessions (`agentteams --bg "task"` starts one): id, state, where, and what it was asked; on a
    terminal the list stays on screen, live, until Ctrl-C."""
    import sys

    from agentteams.cli.output import emit_json
    from agentteams.run import background
    from agentteams.store.paths import Layout

    layout = Layout.from_env()
    under = cwd.expanduser().resolve() if cwd is not None else None
    if as_json:
        emit_json([row.to_json() for row in background.listing(layout, include_done=include_done, under=under)])
        return
    if not sys.stdout.isatty():
        typer.echo(_table(background.listing(layout, include_done=include_done, under=under)))
        return
    _live(layout, include_done, under)


def _table(rows: "list[background.Listed]") -> str:
    from agentteams.inert_text import inert

    if not rows:
        return 'no background sessions (start one: agentteams --bg "task")'
    lines = [f"{'id':<9} {'state':<10} {'cli':<11} {'where':<30} what"]
    for row in rows:
        job = row.job
        cli = "agentteams" if job.ours else "claude"
        lines.append(f"{job.id:<9} {row.state:<10} {cli:<11} {inert(job.cwd)[-30:]:<30} {inert(job.label)[:80]}")
    return "\n".join(lines)


def _live(layout: "Layout", include_done: bool, under: Path | None) -> None:
    import time

    from rich.live import Live
    from rich.text import Text

    from agentteams.run import background
    from agentteams.ui.console import command_console

    def draw() -> Text:
        return Text(_table(background.listing(layout, include_done=include_done, under=under)))

    try:
        with Live(draw(), console=command_console(), auto_refresh=False) as live:
            while True:
                time.sleep(1.0)
                live.update(draw(), refresh=True)
    except KeyboardInterrupt:
        pass
