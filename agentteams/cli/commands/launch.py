"""`agentteams launch team.toml [PROMPT]`: a lead started with the team its file declares (team/teamfile/ checks the
file before anything starts, then makes the team, its tasks and its roles before the first turn)."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentteams.errors import AgentTeamsError

if TYPE_CHECKING:
    pass

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command()
def launch(
    file: Annotated[Path, typer.Argument(help="The team file (TOML): [team], [lead], [[role]], [[task]].")],
    prompt: Annotated[str | None, typer.Argument(help="Given to the lead after the file's instructions.")] = None,
    print_mode: Annotated[bool, typer.Option("-p", "--print", help="Run to the end, print the result, exit.")] = False,
    output_format: Annotated[str, typer.Option("--output-format", help="With -p: text | json | stream-json")] = "text",
    model: Annotated[
        str | None, typer.Option("--model", help="The lead's model (over the file's [lead] model).")
    ] = None,
    permission_mode: Annotated[str | None, typer.Option("--permission-mode", help="The lead's mode.")] = None,
    skip_permissions: Annotated[bool, typer.Option("--dangerously-skip-permissions")] = False,
    teammate_mode: Annotated[
        str | None, typer.Option("--teammate-mode", help="Where teammates run: auto, tmux, in-process.")
    ] = None,
    teammate_command: Annotated[
        str | None, typer.Option("--teammate-command", help="Program started for each teammate (e.g. claude).")
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Only check the file: say what it declares, start nothing.")
    ] = False,
) -> None:
    """Start a lead with a declared team: roles, seed tasks with dependencies and the lead's own instructions.

    The file is checked first (errors name the line); then the lead creates the team and the tasks, spawns every
    role as the Task tool would, and gives its model the file's [lead] instructions followed by PROMPT.
    """
    from agentteams.run.precedence import TEAMMATE_MODES
    from agentteams.team.teamfile.schema import load

    spec = load(file)
    if check:
        typer.echo(f"{file}: team {spec.name}: {len(spec.roles)} role(s), {len(spec.tasks)} task(s)")
        return
    if teammate_mode is not None and teammate_mode not in TEAMMATE_MODES:  # said before the file's team is made
        raise AgentTeamsError(f"--teammate-mode must be one of {', '.join(TEAMMATE_MODES)}, got {teammate_mode!r}")
    if print_mode and not (prompt or spec.instructions.strip()):
        raise AgentTeamsError("with -p, the lead needs a PROMPT or [lead] instructions in the team file")
    from agentteams.run.launch import start

    raise typer.Exit(start(spec, prompt, print_mode, output_format, model, permission_mode, skip_permissions,
                           teammate_mode, teammate_command, file=file))  # fmt: skip
