"""`agentteams attach TEAM AGENT`: focus an agent's tmux pane (zoomed), or attach to its session from outside tmux."""

import os
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from agentteams.backends.tmux import PaneRecord
    from agentteams.store.api import Store
    from agentteams.store.records import Member

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command()
def attach(
    team: Annotated[str, typer.Argument(help="The team; or alone, a background session's id or name.")],
    agent: Annotated[str | None, typer.Argument(help="The member whose pane to show.")] = None,
) -> None:
    """Show an agent's tmux pane: inside tmux, select and zoom it; outside, attach to its session there. With one
    argument, open a background session (`agentteams --bg`) in this terminal (as `claude attach <id>`)."""
    from agentteams.backends.tmux import inside_tmux

    if agent is None:
        from agentteams.backends.tmux import client_env
        from agentteams.run import background
        from agentteams.store.paths import Layout

        layout = Layout.from_env()
        argv = background.attach_argv(layout, background.find(layout, team))
        os.execvpe(argv[0], argv, client_env())  # from inside tmux too

    pane = _live_pane(team, agent)
    if inside_tmux():
        _focus(pane)
    else:  # replaces this process: the terminal becomes a tmux client showing the pane
        argv = attach_argv(pane)
        os.execvp(argv[0], argv)


def attach_argv(pane: "PaneRecord") -> list[str]:
    """`tmux [-S socket] attach-session -t S ; select-window -t W ; select-pane -t P` for a terminal outside tmux."""
    from agentteams.backends.tmux import TmuxBackend

    # the socket is named when the panes live on a server other than the default
    return TmuxBackend().client_argv(
        "attach-session", "-t", pane.session, ";", "select-window", "-t", pane.window, ";", "select-pane", "-t",
        pane.pane_id,
    )  # fmt: skip


def _live_pane(team: str, agent: str) -> "PaneRecord":
    """The agent's pane on the tmux server we can reach; one clear error when it has none or is dead."""
    from agentteams.backends.tmux import inside_tmux
    from agentteams.errors import AgentTeamsError
    from agentteams.store.opener import open_store
    from agentteams.team.status_view import PaneTable, find_member

    store = open_store()
    config = store.teams.read(team)
    member = find_member(config, agent)
    _elsewhere(store, config.name, member)
    presence = store.presence.read(config.name, member.name)
    backend = (presence.backend if presence else None) or member.backend_type
    pane_id = (presence.pane_id if presence else "") or member.tmux_pane_id
    logs = f"use `agentteams logs {config.name} {member.name}`"
    if backend == "in-process":
        raise AgentTeamsError(f"{member.name} runs inside the lead's process: no pane; {logs}")
    if not pane_id:
        raise AgentTeamsError(f"{member.name} has no tmux pane (backend: {backend or 'unknown'}); {logs}")
    if presence is not None and presence.liveness() in ("exited", "dead"):
        raise AgentTeamsError(f"{member.name} is dead: its process {presence.pid} has exited; {logs}")
    table = PaneTable.probe()
    if table.panes is None:
        where = "the tmux server in $TMUX" if inside_tmux() else "a default tmux server"
        raise AgentTeamsError(f"cannot reach {where} to show {member.name}'s pane {pane_id}")
    info = table.panes.get(pane_id)
    if info is None or (info.tag and info.tag != member.agent_id):
        raise AgentTeamsError(f"{member.name} is dead: its pane {pane_id} is gone from this tmux server; {logs}")
    if info.dead:
        raise AgentTeamsError(f"{member.name} is dead: the process in its pane {pane_id} has exited; {logs}")
    return info


def _elsewhere(store: "Store", team: str, member: "Member") -> None:
    """A member on a node of another machine (or inside a node's process) has no pane here: one line saying which
    node, and which host, to run `attach` on instead."""
    import socket

    from agentteams.errors import AgentTeamsError

    if not member.node:
        return
    record = store.nodes.read(member.node)
    logs = f"use `agentteams logs {team} {member.name}`"
    if record is None:
        raise AgentTeamsError(f"{member.name} ran on node {member.node}, which is gone (no heartbeat); {logs}")
    if record.mode == "in-process":
        where = f"node {record.name}'s process on {record.host}"
        raise AgentTeamsError(f"{member.name} runs inside {where}: no pane; {logs}")
    if record.host != socket.gethostname():
        raise AgentTeamsError(
            f"{member.name} runs on node {record.name}, host {record.host}: run `agentteams attach {team} "
            f"{member.name}` there (or {logs[4:]} here)"
        )


def _focus(pane: "PaneRecord") -> None:
    """Select the pane's window and the pane, zoomed; a client showing another session is switched over."""
    from agentteams.backends.tmux import TmuxBackend, current_pane

    backend = TmuxBackend()
    here = current_pane()
    current = backend.pane(here) if here else None
    if current is not None and current.session != pane.session:
        backend.switch_client(pane.pane_id)  # False without a client (a detached server): nothing to do then
    backend.select_pane(pane.pane_id, zoom=True)
