"""`agentteams cleanup`: show, then remove, what dead agents left behind (teams, members, panes, locks, temp files)."""

import json
from typing import Annotated

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command()
def cleanup(
    team: Annotated[str | None, typer.Argument(metavar="TEAM", help="Only this team (default: every team).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only show what would be done.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Remove teams whose lead is gone, dead members, orphaned panes, stale locks and temp files.

    A live agent is never touched: each step re-checks liveness right before it acts. One line per step.
    The tmux server looked at: $AGENTTEAMS_TMUX_SOCKET, else the one in $TMUX, else the default one.
    """
    from agentteams.team.cleanup import PaneView, TeamCleanup  # imported here so the rest of the CLI starts fast

    cleaner = TeamCleanup(panes=PaneView())
    plan = cleaner.plan(team)
    if team and not cleaner.teams.present(team):
        plan.notes.append(f"no team directory for {team!r}: only its panes, if any, were looked at")
    if not dry_run:
        cleaner.apply(plan)
    failed = any(a.outcome == "failed" for a in plan.actions)
    if as_json:
        data = {"dry_run": dry_run, "actions": [a.to_json() for a in plan.actions], "notes": plan.notes}
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for note in plan.notes:
            typer.echo(f"note: {note}", err=True)
        for action in plan.actions:
            typer.echo(action.line())
        if not plan.actions:
            typer.echo("nothing to clean up")
    if failed:
        raise typer.Exit(1)
