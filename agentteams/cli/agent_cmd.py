"""`agentteams [PROMPT] [-p] ...`: the agent itself, as Claude Code's command line runs it."""

from pathlib import Path
from typing import Annotated

import typer

from agentteams import __version__
from agentteams.errors import AgentTeamsError

EPILOG = (
    "Store commands: agentteams team|task|msg ... (see agentteams team --help); "
    "agentteams mock-api --script FILE serves a scripted Messages API for offline runs."
)

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
RULES_HELP = "Tool rules, e.g. 'Bash(git:*) Edit' (repeatable)."


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentteams {__version__}")
        raise typer.Exit()


@app.command(epilog=EPILOG)
def run(
    prompt: Annotated[str | None, typer.Argument(help="The prompt (with -p, read from stdin when omitted).")] = None,
    print_mode: Annotated[bool, typer.Option("-p", "--print", help="Run the prompt, print the result, exit.")] = False,
    output_format: Annotated[str, typer.Option("--output-format", help="text | json | stream-json")] = "text",
    max_turns: Annotated[int | None, typer.Option("--max-turns", min=1, help="Most model calls.")] = None,
    model: Annotated[str, typer.Option("--model", help="sonnet, opus, haiku or a model id.")] = "sonnet",
    append_system_prompt: Annotated[str | None, typer.Option("--append-system-prompt")] = None,
    permission_mode: Annotated[str, typer.Option("--permission-mode", help="default | acceptEdits | ...")] = "default",
    skip_permissions: Annotated[bool, typer.Option("--dangerously-skip-permissions")] = False,
    allowed_tools: Annotated[
        list[str] | None, typer.Option("--allowedTools", "--allowed-tools", help=RULES_HELP)
    ] = None,
    disallowed_tools: Annotated[
        list[str] | None, typer.Option("--disallowedTools", "--disallowed-tools", help=RULES_HELP)
    ] = None,
    session_id: Annotated[str | None, typer.Option("--session-id", help="A UUID for this session.")] = None,
    version: Annotated[
        bool, typer.Option("--version", "-v", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """A Claude-Code-compatible coding agent whose headline feature is agent teams."""
    from agentteams.cli import headless
    from agentteams.session import SessionOptions

    if output_format not in headless.FORMATS:
        raise AgentTeamsError(f"--output-format must be one of {', '.join(headless.FORMATS)}, got {output_format!r}")
    if not print_mode:
        raise AgentTeamsError("the interactive lead is not available yet: run a prompt headless with -p PROMPT")
    text = prompt if prompt is not None else headless.read_stdin_prompt()
    options = SessionOptions(
        cwd=Path.cwd(), model=model, permission_mode="bypassPermissions" if skip_permissions else permission_mode,
        allowed_tools=allowed_tools or [], disallowed_tools=disallowed_tools or [],
        append_system_prompt=append_system_prompt, max_turns=max_turns, interactive=False,
    )  # fmt: skip
    if session_id:
        options.session_id = session_id
    raise typer.Exit(headless.run(text, options, output_format))
