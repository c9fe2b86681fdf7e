"""`agentteams watch [TEAM]`: `status` as a live dashboard with the newest messages, redrawn on each change."""

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from agentteams.errors import CorruptFileError
    from agentteams.store.api import Store
    from agentteams.store.paths import Layout
    from agentteams.team.status_view import FeedItem, TeamView
    from agentteams.ui.console import Console

    Views = list[TeamView | CorruptFileError]
    Show = Callable[[Views, list[FeedItem]], None]

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
REFRESH = 1.0  # seconds: a redraw even without file changes, so a process that died is noticed


@app.command()
def watch(team: Annotated[str | None, typer.Argument(help="One team (default: every team).")] = None) -> None:
    """Follow every team (or one) live until Ctrl-C: members, tasks and the newest messages between agents.

    When the output is not a terminal, print each new message as one plain line instead.
    """
    from agentteams.store.opener import open_store
    from agentteams.store.paths import Layout
    from agentteams.ui.console import command_console

    layout = Layout.from_env()
    if team is not None:
        team = open_store(layout).teams.read(team).name  # an unknown team: one clear error, before any display
    console = command_console()
    try:
        ended = _live(console, layout, team) if console.is_terminal else _lines(layout, team)
    except KeyboardInterrupt:
        return
    if ended:
        typer.echo(ended)


def _live(console: "Console", layout: "Layout", team: str | None) -> str:
    from rich.live import Live

    from agentteams.ui.dashboard import rich_dashboard

    with Live(console=console, auto_refresh=False, redirect_stdout=False, redirect_stderr=False) as live:
        return _follow(layout, team, lambda views, feed: live.update(rich_dashboard(views, feed), refresh=True))


def _lines(layout: "Layout", team: str | None) -> str:
    from agentteams.ui.dashboard import FEED_SIZE, feed_line

    seen: set[str] = set()
    first = True

    def show(views: "Views", feed: "list[FeedItem]") -> None:
        nonlocal first
        new = [i for i in feed if i.key not in seen]
        seen.update(i.key for i in new)
        for item in new[-FEED_SIZE:] if first else new:  # at the start, only the newest as context
            typer.echo(feed_line(item, with_team=team is None, full_time=True))
        first = False

    return _follow(layout, team, show)


def _snapshot(store: "Store", team: str | None) -> "tuple[Views, list[FeedItem]]":
    from agentteams.errors import CorruptFileError
    from agentteams.team.status_view import PaneTable, build_view, load_feed, read_configs

    panes = PaneTable.probe()
    views: Views = []
    feed: list[FeedItem] = []
    for config in read_configs(store, team):
        if isinstance(config, CorruptFileError):
            views.append(config)
            continue
        items = load_feed(store, config)
        views.append(build_view(store, config, panes, items))
        feed += items
    feed.sort(key=lambda i: i.timestamp)
    return views, feed


def _follow(layout: "Layout", team: str | None, show: "Show") -> str:
    """Call `show` now and after every change to the teams (or every REFRESH seconds), until Ctrl-C or until the
    one team followed is deleted (then returns what to say). The store says what a change is: files on disk, or
    entries in Redis streams."""
    from agentteams.errors import CorruptFileError, NotFoundError
    from agentteams.store.api import Waiter
    from agentteams.store.opener import open_store

    store = open_store(layout)
    waiter: Waiter | None = None
    followed: list[str] | None = None
    try:
        while True:
            try:
                views, feed = _snapshot(store, team)
            except NotFoundError:
                if team is not None:
                    return f"team {team} was deleted"
                views, feed = [], []  # a team deleted between listing and reading it: the next pass sees it gone
            show(views, feed)
            names = [v.name for v in views if not isinstance(v, CorruptFileError)]
            if names != followed:  # a team came or went: follow the new set, then look again at once
                if waiter is not None:
                    waiter.close()
                waiter, followed = store.watch_teams(names), names
                continue
            assert waiter is not None
            waiter.wait(REFRESH)
    finally:
        if waiter is not None:
            waiter.close()
