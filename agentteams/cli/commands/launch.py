"""`agentteams launch team.toml [PROMPT]`: a lead started with the team its file declares (team/teamfile/ checks the
file before anything starts, then makes the team, its tasks and its roles before the first turn)."""

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError

if TYPE_CHECKING:
    from agentteams.team.teamfile.schema import TeamFile

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
    from agentteams.cli.commands.agent import MODES
    from agentteams.team.teamfile.schema import load

    spec = load(file)
    if check:
        typer.echo(f"{file}: team {spec.name}: {len(spec.roles)} role(s), {len(spec.tasks)} task(s)")
        return
    if teammate_mode is not None and teammate_mode not in MODES:
        raise AgentTeamsError(f"--teammate-mode must be one of {', '.join(MODES)}, got {teammate_mode!r}")
    if print_mode and not (prompt or spec.instructions.strip()):
        raise AgentTeamsError("with -p, the lead needs a PROMPT or [lead] instructions in the team file")
    raise typer.Exit(_run(spec, prompt, print_mode, output_format, model, permission_mode, skip_permissions,
                          teammate_mode, teammate_command))  # fmt: skip


def _run(
    spec: "TeamFile", prompt: str | None, print_mode: bool, output_format: str, model: str | None,
    permission_mode: str | None, skip_permissions: bool, teammate_mode: str | None, teammate_command: str | None,
) -> int:  # fmt: skip
    """The lead, composed as `agentteams [PROMPT]` composes it (settings, then flags), with the file's team."""
    from agentteams.agent.session import SessionOptions
    from agentteams.cli.commands.agent import PERMISSION_ALIASES
    from agentteams.run import headless
    from agentteams.settings.load import load_settings
    from agentteams.team.teamfile.seeding import TeamSeed

    headless.check_flags(headless.Flags(print_mode, output_format, "text", output_format == "stream-json", None))
    cwd = Path.cwd()
    found = load_settings(cwd)
    for problem in found.problems:
        diagnostics.warning("%s", problem)
    os.environ.update(found.env)  # as for `agentteams`: the settings' env is the process's
    wanted = permission_mode or found.permissions.default_mode or "default"
    mode = "bypassPermissions" if skip_permissions else PERMISSION_ALIASES.get(wanted, wanted)
    chosen = model or spec.lead_model or os.environ.get("ANTHROPIC_MODEL", "").strip() or found.model or "sonnet"
    options = SessionOptions(cwd=cwd, model=chosen, permission_mode=mode, interactive=not print_mode, settings=found)
    where = teammate_mode or found.teammate_mode or "auto"
    command = teammate_command or os.environ.get("CLAUDE_CODE_TEAMMATE_COMMAND") or None
    seed = TeamSeed(spec)
    if not print_mode:
        from agentteams.run import interactive

        return interactive.run(prompt, options, teammate_mode=where, teammate_command=command, seed=seed)
    return headless.run(prompt or "", options, output_format, teammate_mode=where, teammate_command=command, seed=seed)
