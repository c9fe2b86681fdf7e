"""The `agentteams` command: typer app, composition root, and the one place that turns errors into exits."""

from __future__ import annotations

import logging
import os
import sys

import typer

from agentteams import __version__
from agentteams.cli import agent_cmd, mockapi_cmd, msg_cmd, task_cmd, team_cmd
from agentteams.errors import AgentTeamsError

app = typer.Typer(
    name="agentteams",
    help="A Claude-Code-compatible agent CLI whose headline feature is agent teams.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,  # plain help: typer's rich help costs ~90 ms at every start-up
)
app.add_typer(team_cmd.app, name="team")
app.add_typer(task_cmd.app, name="task")
app.add_typer(msg_cmd.app, name="msg")
mockapi_cmd.register(app)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentteams {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", "-v", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Create and inspect agent teams, their tasks and mailboxes."""


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"agentteams: {record.levelname.lower()}: {record.getMessage()}"


def main() -> None:
    """Console-script entry point: one clear line and exit 1 for every expected failure."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    log = logging.getLogger("agentteams")
    log.addHandler(handler)
    log.setLevel(logging.WARNING)
    argv = sys.argv[1:]
    # store commands are sub-commands; anything else is the agent itself, whose first word may be a prompt
    target = app if argv and argv[0] in agent_cmd.STORE_COMMANDS else agent_cmd.app
    try:
        code = target(args=argv, prog_name="agentteams", standalone_mode=False)
    except typer.TyperException as e:  # a usage error (unknown option, missing argument, ...)
        if type(e).__name__ == "NoArgsIsHelpError":  # typer has already printed the help
            sys.exit(2)
        message = " ".join(e.format_message().split())
        typer.echo(f"agentteams: error: {message} (see --help)", err=True)
        sys.exit(1)
    except typer.Abort:
        typer.echo("agentteams: error: aborted", err=True)
        sys.exit(1)
    except AgentTeamsError as e:
        typer.echo(f"agentteams: error: {e}", err=True)
        sys.exit(1)
    except OSError as e:
        typer.echo(f"agentteams: error: {e.strerror or e}: {e.filename or ''}".rstrip(": "), err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # a bug of ours: one line, and the traceback only when asked for
        if os.environ.get("AGENTTEAMS_DEBUG"):
            raise
        typer.echo(
            f"agentteams: internal error: {type(e).__name__}: {e} (set AGENTTEAMS_DEBUG=1 for details)", err=True
        )
        sys.exit(70)
    sys.exit(code if isinstance(code, int) else 0)  # typer.Exit(n) comes back as n
