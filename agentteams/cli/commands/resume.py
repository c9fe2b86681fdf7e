"""`agentteams resume TEAM [AGENT]`: a team whose lead died taken back by its lead's session, resumed in the lead's
directory (the same as `agentteams -r <leadSessionId>` there), or one dead teammate of it started again alone."""

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from agentteams.store.file.store import FileStore
    from agentteams.store.records import TeamConfig

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command(context_settings={"ignore_unknown_options": True})
def resume(
    words: Annotated[list[str], typer.Argument(metavar="TEAM [AGENT] [LEAD OPTIONS]...", help="What to bring back.")],
) -> None:
    """Bring back a team whose lead died, from any directory: its lead's conversation resumed where it ran, which
    takes the team back (live teammates adopted, dead ones restarted with their conversations). Options after
    TEAM go to the lead (e.g. -p "carry on"). With AGENT: only that teammate, with its own conversation; it waits
    for its lead like the others.
    """
    import os
    from pathlib import Path

    from agentteams.errors import AgentTeamsError
    from agentteams.store.file.store import FileStore
    from agentteams.store.transcripts.reader import find
    from agentteams.team.spawn.base import own_executable
    from agentteams.team.teammate.lead_watch import lead_running

    team, agent, lead_options = _words(words)
    store = FileStore()  # a resume starts from this machine's transcripts: the file store's layout
    config = store.teams.read(team)  # one clear line for an unknown team
    if lead_running(store, team, config):
        hint = f"ask it to bring {agent} back (its Task tool with resume)" if agent else "there is nothing to resume"
        raise AgentTeamsError(f"team {team}'s lead is still running: {hint}")
    if agent is not None:
        typer.echo(_one_teammate(store, config, agent))
        return
    lead = config.member(config.lead_agent_id)
    cwd = Path(lead.cwd) if lead is not None and lead.cwd else Path.cwd()
    if not config.lead_session_id or find(store.layout, cwd, config.lead_session_id) is None:
        raise AgentTeamsError(f"team {team}'s lead session {config.lead_session_id or '(none)'} has no transcript")
    os.chdir(cwd)
    command = own_executable()
    os.execv(command[0], [*command, "--resume", config.lead_session_id, *lead_options])


def _words(words: list[str]) -> tuple[str, str | None, list[str]]:
    """TEAM, then AGENT unless the next word is an option (typer would take `-p`'s value for AGENT), then options."""
    from agentteams.errors import AgentTeamsError

    team, rest = words[0], words[1:]
    if team.startswith("-"):
        raise AgentTeamsError(f"the team comes first, before options like {team}")
    if rest and not rest[0].startswith("-"):
        if rest[1:]:
            raise AgentTeamsError("a teammate resumed alone takes no options: they are for the lead")
        return team, rest[0], []
    return team, None, rest


def _one_teammate(store: "FileStore", config: "TeamConfig", name: str) -> str:
    """Start one dead teammate in a tmux pane with its session resumed; the line to print."""
    import contextlib
    from pathlib import Path

    from agentteams.errors import AgentTeamsError
    from agentteams.model.aliases import resolve_model
    from agentteams.team.spawn.base import Handle, SpawnRequest
    from agentteams.team.spawn.roster import relaunch_member
    from agentteams.team.spawn.spawners import TmuxSpawner

    member = config.member(name)
    if member is None:
        member = store.teams.return_member(config.name, name)  # it died while the lead still ran
    if member is None or member.agent_id == config.lead_agent_id:
        raise AgentTeamsError(f"{name!r} is not a teammate of team {config.name} that can be resumed")
    presence = store.presence.read(config.name, member.name)
    if presence is not None and presence.liveness() not in ("exited", "dead"):
        raise AgentTeamsError(f"{member.name} is still running (pid {presence.pid})")
    req = SpawnRequest(
        name=member.name, team=config.name, color=member.color or "blue", cwd=Path(member.cwd or Path.cwd()),
        parent_session_id=config.lead_session_id, model=member.model or resolve_model("default"),
        permission_mode=member.mode or "default",
        plan_mode_required=bool(member.plan_mode_required), agent_type=member.agent_type, resume=member.session_id,
        allowed_tools=list(member.allowed_tools or []), disallowed_tools=list(member.disallowed_tools or []),
    )  # fmt: skip
    spawner = TmuxSpawner(store)
    if member.tmux_pane_id:  # its old pane, left open by remain-on-exit
        with contextlib.suppress(Exception):
            spawner.stop(Handle(member.name, "tmux", pane_id=member.tmux_pane_id))
    # no key: this process is no lead; a resumed lead restarts it with one
    handle = relaunch_member(store.teams, config.name, member, lambda: spawner.spawn(req))
    said = "with its own conversation" if member.session_id else "without a conversation (none was recorded)"
    return f"{member.name} is running again in team {config.name} (pane {handle.pane_id}), {said}"
