"""`agentteams set TEAM AGENT --mode M | --model X`: change a live teammate through its running lead (a shell holds no
lead key, and a teammate takes a change only in its lead's signed voice: store/changes.py)."""

from typing import Annotated

import typer

from agentteams.errors import AgentTeamsError, NotFoundError

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command(name="set")
def set_teammate(
    team: Annotated[str, typer.Argument(metavar="TEAM")],
    agent: Annotated[str, typer.Argument(metavar="AGENT", help="The teammate's name.")],
    mode: Annotated[str | None, typer.Option("--mode", help="Its new permission mode (at once).")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Its new model (from its next turn).")] = None,
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for the lead's answer.")] = 15.0,
) -> None:
    """Change a live teammate's permission mode or model; its running lead checks and sends the change.

    A mode applies from the teammate's next tool call; a model from its next turn, with its conversation
    kept. A Claude Code teammate that takes no such change from its inbox (a mode for 2.1.330, a model for every
    version) is restarted by its lead at its next pause, with the change and its own conversation resumed."""
    from agentteams.store.opener import open_store
    from agentteams.tools.runtime_hooks import PERMISSION_MODES

    if mode is None and model is None:
        raise AgentTeamsError("say what to change: --mode MODE and/or --model MODEL")
    if mode is not None and mode not in PERMISSION_MODES:
        raise AgentTeamsError(f"unknown mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}")
    store = open_store()
    config = store.teams.read(team)  # no such team: one line
    member = config.member(agent)
    if member is None or member.agent_id == config.lead_agent_id:
        raise NotFoundError(f"team {config.name} has no teammate {agent!r}")
    lead = config.lead_process
    if lead is None or lead.is_gone():
        raise AgentTeamsError(
            f"the lead of team {config.name} is not running: only a running lead can change a teammate "
            f"(resume it with `agentteams resume {config.name}`)"
        )
    request = store.changes.submit(config.name, member.name, mode=mode, model=model)
    got = store.changes.wait_answer(config.name, request, wait)
    if got is None:
        raise AgentTeamsError(
            f"the lead of team {config.name} did not answer within {wait:g} s (only an agentteams lead takes "
            "these requests); nothing was changed"
        )
    ok, message = got
    if not ok:
        raise AgentTeamsError(message)
    typer.echo(message)
