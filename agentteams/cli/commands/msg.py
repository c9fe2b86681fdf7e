"""`agentteams msg ...`: send, broadcast and read team mailboxes from a shell."""

from typing import TYPE_CHECKING, Annotated

import typer

from agentteams.cli.output import emit_json, envelope_text
from agentteams.errors import NotFoundError

if TYPE_CHECKING:
    from agentteams.store.api import Store


def _store() -> "Store":
    from agentteams.store.opener import open_store  # loaded per command: start-up stays at typer's own cost

    return open_store()


app = typer.Typer(help="Send and read team messages.", no_args_is_help=True, rich_markup_mode=None)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
FromOpt = Annotated[str, typer.Option("--from", help="Sender name.")]


@app.command()
def send(
    team: str,
    to: str,
    text: str,
    sender: FromOpt = "team-lead",
    summary: Annotated[str | None, typer.Option("--summary")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Send a message to one member's inbox."""
    env = _store().mail.send(team, to, text, sender=sender, summary=summary)
    if as_json:
        emit_json(env.to_json())
    else:
        typer.echo(env.msg_id)


@app.command()
def broadcast(team: str, text: str, sender: FromOpt = "team-lead", as_json: JsonOpt = False) -> None:
    """Send a message to every member but the sender."""
    names = _store().mail.broadcast(team, text, sender=sender)
    if as_json:
        emit_json(names)
    else:
        typer.echo(" ".join(names))


@app.command()
def read(
    team: str,
    agent: str,
    unread: Annotated[bool, typer.Option("--unread", help="Only unread messages.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Include archived history.")] = False,
    mark_read: Annotated[bool, typer.Option("--mark-read", help="Mark what is shown as read.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Read an agent's inbox."""
    store = _store()
    if not store.teams.present(team):
        raise NotFoundError(f"no team named {team!r} (no {store.teams.location(team)})")
    box = store.mail
    envs = box.read_all(team, agent) if all_ else box.read_live(team, agent)
    if unread:
        envs = [e for e in envs if e.unread]
    if mark_read:
        box.mark_delivered(team, agent, envs)
    if as_json:
        emit_json([e.to_json() for e in envs])
    else:
        for e in envs:
            typer.echo(envelope_text(e))
