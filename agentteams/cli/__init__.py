"""The `agentteams` command: typer app, composition root, and the one place that turns errors into exits.
May import every layer; nothing imports it (but `__main__`, and the fork server, which builds its click command)."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import NoReturn

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError

TYPE_CHECKING = False  # not typing's: importing typing costs ~3 ms on every command
if TYPE_CHECKING:
    import typer  # imported inside functions: a teammate's launcher must not pay ~140 ms for it

GROUPS = ("team", "task", "msg")  # command groups: `agentteams team create ...`
# single commands, each a module `agentteams.cli.commands.<name>` with a one-command typer `app`
COMMANDS = {"mock-api": "mock_api", "status": "status", "watch": "watch", "attach": "attach", "logs": "logs",
            "cleanup": "cleanup", "doctor": "doctor", "demo": "demo", "config": "config",
            "resume": "resume", "merge": "merge", "diff": "diff", "launch": "launch", "set": "set",
            "mirror": "mirror", "node": "node",
            # Claude Code's own subcommands (`claude --help`), so that none of these words goes to the model
            "mcp": "mcp", "auth": "auth", "plugin": "plugin", "plugins": "plugin", "update": "update",
            "upgrade": "update", "install": "install", "import": "import_cmd", "setup-token": "setup_token",
            "auto-mode": "auto_mode", "gateway": "gateway", "ultrareview": "ultrareview", "purge": "purge",
            "project": "project", "agents": "agents", "stop": "stop", "kill": "stop", "respawn": "respawn",
            "rm": "rm"}  # fmt: skip


def _target(argv: list[str]) -> tuple[typer.Typer, list[str], str]:
    """The one typer app this command line needs: building every group's commands would cost ~30 ms."""
    first = argv[0] if argv else ""
    if first in GROUPS or first in COMMANDS:
        module = importlib.import_module(f"agentteams.cli.commands.{COMMANDS.get(first, first)}")
        return module.app, argv[1:], f"agentteams {first}"
    from agentteams.cli.commands import agent
    from agentteams.run import session_choice

    return agent.app, session_choice.optional_value(argv), "agentteams"


_COMMANDS: dict[int, object] = {}  # by id of the typer app


def warm_up() -> None:
    """What the fork server runs once before it forks (`procs.fork.server.WARM_UP` names it): each child would
    otherwise build the agent's click command before parsing its command line."""
    from agentteams.cli.commands import agent

    click_command(agent.app)


def click_command(app: typer.Typer) -> typer.core.TyperCommand | typer.core.TyperGroup:
    """`app`'s click command, built once per process: typer builds it anew on every call (~5 ms of each teammate's
    start), so the fork server builds it for all its children (`forkserver.preimport`)."""
    import typer.main

    built = _COMMANDS.get(id(app))
    if built is None:
        built = _COMMANDS[id(app)] = typer.main.get_command(app)
    return built  # type: ignore[return-value]


def _one_line(level: str, message: str) -> None:
    from agentteams.inert_text import inert  # a warning may carry another session's words: shown, never obeyed

    _say(f"agentteams: {level}: {inert(message)}")


def _say(line: str) -> None:
    """One line on stderr, flushed (as typer.echo, which a cold start does not import)."""
    with contextlib.suppress(OSError, ValueError):  # a reader gone: the exit code still tells
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def main() -> None:
    """Console-script entry point: one clear line and exit 1 for every expected failure; the process ends at once
    when the command is done (`_leave`)."""
    try:
        start()
    except SystemExit as e:
        _leave(e)


def start() -> None:
    """The command, after its fast paths (a store option, a fork server's or the warm server's run). A fork server's
    child runs this, not `main`: it reports its exit status to its launcher itself (procs/fork/child.py)."""
    if (len(sys.argv) > 1 and sys.argv[1].startswith("--store")) or os.environ.get("AGENTTEAMS_STORE"):
        from agentteams.cli import store_opt

        store_opt.apply(sys.argv)  # before the fast paths: the store is chosen for whatever runs this command
        store_opt.check_command(sys.argv)
    if "AGENTTEAMS_FORKSERVER" in os.environ:  # launch.ENV_VAR; tested here so other commands skip the import
        from agentteams.procs import launcher as launch

        launch.run_if_teammate(sys.argv)  # exits when the fork server ran this teammate; else start cold
    elif ("-p" in sys.argv or "--print" in sys.argv) and not os.environ.get("AGENTTEAMS_NO_WARM"):  # warm.DISABLE_VAR
        from agentteams.procs.warm import client as warm

        warm.run_if_print(
            sys.argv, (*GROUPS, *COMMANDS)
        )  # exits when the warm server ran it; else start cold (and a server for next time)
    run()


def _leave(ending: SystemExit) -> NoReturn:
    """Exit without the interpreter's teardown (~40 ms of freeing modules after the answer is out): atexit handlers
    run and the standard streams are flushed first; a thread that is not a daemon still gets its normal wait."""
    import atexit
    import threading

    code = ending.code
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if others or not (code is None or isinstance(code, int)):
        raise ending
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader gone, a closed stream: the interpreter ignores them
            stream.flush()
    os._exit(code or 0)


def run() -> None:
    """The command itself, in this process (what the warm server's children run: no fast path again)."""
    diagnostics.set_sink(_one_line)
    code: object
    try:
        code = _run_without_typer(sys.argv[1:])
        if code is None:
            code = _run_with_typer(sys.argv[1:])
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:
        line, code = _failure(e)
        _say(line)
    sys.exit(code if isinstance(code, int) else 0)  # typer.Exit(n) comes back as n


def _run_without_typer(argv: list[str]) -> int | None:
    """The agent itself when its command line reads plainly (cli/root_argv.py), or `status` (cli/status_show.py);
    None: typer reads it."""
    if argv and argv[0] == "status":
        from agentteams.cli import status_show

        args = status_show.parse(argv[1:])
        if args is None:
            return None
        status_show.show(args)
        return 0
    if argv and (argv[0] in GROUPS or argv[0] in COMMANDS):
        return None
    from agentteams.cli import root_argv
    from agentteams.run.session_choice import optional_value

    given = root_argv.parse(optional_value(argv))
    if given is None:
        return None
    from agentteams.run.agent import flags_from_options, start

    return start(flags_from_options(given))


def _run_with_typer(argv: list[str]) -> object:
    target, args, prog = _target(argv)
    return click_command(target)(args=args, prog_name=prog, standalone_mode=False)


def _failure(e: Exception) -> tuple[str, int]:
    """The one line and the exit code for a command that raised `e`; a bug of ours re-raises when asked to."""
    if type(e).__module__.startswith("typer"):
        import typer

        if isinstance(e, typer.TyperException):  # a usage error (unknown option, missing argument, ...)
            if type(e).__name__ == "NoArgsIsHelpError":  # typer has already printed the help
                sys.exit(2)
            return f"agentteams: error: {' '.join(e.format_message().split())} (see --help)", 1
        if isinstance(e, typer.Abort):
            return "agentteams: error: aborted", 1
    if isinstance(e, AgentTeamsError):
        return f"agentteams: error: {e}", 1
    if isinstance(e, OSError):
        return f"agentteams: error: {e.strerror or e}: {e.filename or ''}".rstrip(": "), 1
    if os.environ.get("AGENTTEAMS_DEBUG"):
        raise e
    if type(e).__module__.startswith("redis."):  # the Redis store refused (an ACL) or stayed away past its retries
        return f"agentteams: error: the Redis store: {' '.join(str(e).split())}", 1
    return f"agentteams: internal error: {type(e).__name__}: {e} (set AGENTTEAMS_DEBUG=1 for details)", 70
