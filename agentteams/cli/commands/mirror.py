"""`agentteams --store redis://… mirror [--team T] [--once]`: keep this machine's config root holding a copy of the
store's teams in Claude Code's file layout, for local monitors and tools that read it (store/mirror.py)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Annotated

import typer

from agentteams.errors import AgentTeamsError

if TYPE_CHECKING:
    from agentteams.store.api import Store, Waiter
    from agentteams.store.mirror import Mirror, Wait

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command(name="mirror")
def mirror(
    team: Annotated[list[str] | None, typer.Option("--team", help="Only this team (repeatable).")] = None,
    once: Annotated[bool, typer.Option("--once", help="Copy once and exit.")] = False,
    interval: Annotated[float, typer.Option("--interval", help="Longest wait between copies, in seconds.")] = 2.0,
) -> None:
    """Copy the teams of the Redis store (--store / AGENTTEAMS_STORE) into this machine's config root, as
    teams/<team>/config.json, inboxes and tasks/<team>/<id>.json files, and keep them current until stopped (Ctrl-C).

    One way only: a change made to the copy is overwritten; a local team of the same name is left alone."""
    import os
    import signal

    from agentteams.store.file.store import FileStore
    from agentteams.store.mirror import Mirror, run
    from agentteams.store.opener import ENV_STORE, open_store
    from agentteams.store.paths import Layout

    source = open_store()
    if isinstance(source, FileStore):
        raise AgentTeamsError("the mirror copies a Redis store into this machine's files: choose one with --store "
                              "redis://host:port/db (or AGENTTEAMS_STORE)")  # fmt: skip
    if not 0.1 <= interval <= 3600:
        raise AgentTeamsError(f"--interval {interval:g}: give 0.1 to 3600 seconds")
    copy = Mirror(source, Layout.from_env(), team or ())
    if once:
        done = copy.sync()
        typer.echo(f"mirrored into {copy.layout.root}: {len(done.written)} written, {len(done.removed)} removed")
        return
    news = _News(source, copy)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: news.stop())
    typer.echo(f"mirroring {os.environ.get(ENV_STORE)} into {copy.layout.root} (Ctrl-C stops)")
    run(copy, news.arm, lambda seconds: not news.stopped.wait(seconds), interval)


class _News:
    """The wait between copies: it wakes on any change of the mirrored teams (an event, a message, a new inbox)
    since it was armed, before the copy; a team made meanwhile is picked up within the interval."""

    def __init__(self, source: Store, copy: Mirror) -> None:
        self.source, self.copy = source, copy
        self.stopped = threading.Event()
        self.waiter: Waiter | None = None

    def stop(self) -> None:
        self.stopped.set()
        if self.waiter is not None:
            self.waiter.wake()

    def arm(self) -> Wait:
        self.waiter = waiter = self.source.watch_teams([c.name for c in self.copy.wanted()])

        def wait(seconds: float) -> bool:
            if not self.stopped.is_set():
                waiter.wait(seconds)
            waiter.close()
            return not self.stopped.is_set()

        return wait
