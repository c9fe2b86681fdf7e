"""`agentteams node --store URL [--name NAME] [--slots N] [--workdir DIR]`: this machine runs the teammates leads
place on it, until Ctrl-C or SIGTERM (then it stops them and unregisters)."""

import os
import signal
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from agentteams.store.node_records import NodeMode, NodeRecord

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
MODES = ("in-process", "tmux")


@app.command()
def node(
    store: Annotated[
        str | None, typer.Option("--store", help="The shared store: redis://host:port/db (default: AGENTTEAMS_STORE).")
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="This node's name (default: the host name).")] = None,
    slots: Annotated[int, typer.Option("--slots", min=1, help="How many teammates it runs at once.")] = 4,
    workdir: Annotated[
        Path | None, typer.Option("--workdir", help="Where its teammates work (default: here); clones go under it.")
    ] = None,
    teammate_mode: Annotated[
        str,
        typer.Option("--teammate-mode", help="in-process (threads of this process) or tmux (a session of its own)."),
    ] = "in-process",
    tmux_socket: Annotated[str | None, typer.Option("--tmux-socket", help="The tmux server's socket path.")] = None,
    heartbeat: Annotated[
        float, typer.Option("--heartbeat", min=0.05, hidden=True, help="Seconds between beats.")
    ] = 1.0,
) -> None:
    """Register this machine as a node of the store and run the teammates leads place on it.

    The node has its own API key and environment: nothing secret travels in a lead's order.
    """
    from agentteams.store.opener import open_store
    from agentteams.store.paths import Layout
    from agentteams.team.nodes.node_loop import NodeRunner

    if store is not None:
        from agentteams.cli.store_opt import set_store

        set_store(store)
    where = _workdir(workdir, teammate_mode)
    layout = Layout.from_env()
    shared = open_store(layout)
    record = _record(shared, name, slots, teammate_mode, heartbeat)
    spawner = _spawner(teammate_mode, layout, shared, tmux_socket)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda _s, _f: stop.set())
    typer.echo(f"node {record.name}: {slots} slots, teammates {teammate_mode}, in {where}; {_where(shared)} "
               "(Ctrl-C stops)")  # fmt: skip
    NodeRunner(shared, record, spawner, where, beat=heartbeat, layout=layout).run(stop)


def _workdir(workdir: Path | None, mode: str) -> Path:
    from agentteams.errors import AgentTeamsError

    if mode not in MODES:
        raise AgentTeamsError(f"--teammate-mode must be one of {', '.join(MODES)}")
    where = (workdir or Path.cwd()).expanduser().resolve()
    if not where.is_dir():
        raise AgentTeamsError(f"--workdir {where} is not a directory")
    return where


def _record(store: Any, name: str | None, slots: int, mode: str, heartbeat: float) -> "NodeRecord":
    """This node's record; refused while a live node holds the name (two nodes must not take one queue's orders)."""
    from agentteams import __version__
    from agentteams.errors import AgentTeamsError
    from agentteams.store.node_records import NodeRecord
    from agentteams.store.paths import path_part

    me = path_part(name or socket.gethostname(), "node")
    other = store.nodes.read(me)
    if other is not None:
        where = f"pid {other.pid} on {other.host}"
        raise AgentTeamsError(f"node {me} is already registered ({where}): choose another --name")
    ttl = max(3000, int(heartbeat * 3000))  # three beats, and never under 3 s: a busy machine skips a beat
    kind: NodeMode = "tmux" if mode == "tmux" else "in-process"
    return NodeRecord(me, socket.gethostname(), slots, __version__, kind, os.getpid(), ttl_ms=ttl)


def _spawner(mode: str, layout: Any, store: Any, tmux_socket: str | None) -> Any:
    """Its teammates' way to start: threads with this node's own model client, or panes of its own tmux server."""
    if mode == "tmux":
        from agentteams.team.spawn.spawners import TmuxSpawner

        return TmuxSpawner(store, socket_path=tmux_socket)
    from agentteams.model.anthropic_client import AnthropicClient
    from agentteams.model.config import ModelConfig
    from agentteams.settings.keyhelper import credentials_env
    from agentteams.settings.load import load_settings
    from agentteams.team.spawn.spawners import InProcessSpawner

    settings = load_settings(Path.cwd())
    os.environ.update(settings.env)  # as an agent does: the settings' env is the process's (its teammates' too)
    config = ModelConfig.from_env(credentials_env(settings.api_key_helper, Path.cwd()))
    return InProcessSpawner(layout, AnthropicClient(config), store=store, secrets=tuple(config.secrets()))


def _where(store: Any) -> str:
    url = getattr(store, "url", None)
    return f"registered at {url}" if url is not None else f"registered in {store.layout.root}"
