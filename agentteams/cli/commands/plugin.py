"""`agentteams plugin | plugins`: Claude Code's `claude plugin`. `list` shows the plugins claude installed (the same
files); installing and managing them needs claude's marketplaces, so the other subcommands say so in one line.
agentteams itself loads plugins given with `--plugin-dir`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None, no_args_is_help=True,
                  help="Manage plugins (as `claude plugin`): list what Claude Code installed.")  # fmt: skip
HELP = {"help_option_names": ["-h", "--help"]}
ANY = {**HELP, "allow_extra_args": True, "ignore_unknown_options": True}
OTHERS = ("configure", "details", "disable", "enable", "eval", "init", "new", "install", "i", "marketplace", "prune",
          "autoremove", "restore-set-aside", "tag", "test", "uninstall", "remove", "update", "validate")  # fmt: skip


@app.command("list", context_settings=HELP)
def list_plugins(
    as_json: Annotated[bool, typer.Option("--json", help="Output as JSON.")] = False,
    available: Annotated[bool, typer.Option("--available", help="Not available here (marketplaces).")] = False,
) -> None:
    """List installed plugins (from Claude Code's installed_plugins.json and enabledPlugins)."""
    from agentteams.settings.installed_plugins import installed
    from agentteams.settings.load import load_settings

    if available:
        raise _refuse("list --available")
    found = installed(load_settings(Path.cwd()).merged)
    if as_json:
        kept = ("installedAt", "lastUpdated", "projectPath")
        rows = [{"id": p.id, "version": p.version, "scope": p.scope, "enabled": p.enabled,
                 "installPath": p.install_path, **{k: v for k, v in p.raw.items() if k in kept}}
                for p in found]  # fmt: skip
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not found:
        typer.echo("No plugins installed. (agentteams loads plugins given with --plugin-dir; `claude plugin install` "
                   "installs them for both)")  # fmt: skip
        return
    lines = ["Installed plugins:", ""]
    for p in found:
        status = "\u2714 enabled" if p.enabled else "\u2718 disabled"
        lines += [f"  \u276f {p.id}", f"    Version: {p.version}", f"    Scope: {p.scope}", f"    Status: {status}", ""]
    typer.echo("\n".join(lines))


def _refuse(word: str) -> typer.Exit:
    typer.echo(f"agentteams plugin {word}: plugin marketplaces are Claude Code's: run `claude plugin {word}` "
               "(agentteams loads plugins given with --plugin-dir)", err=True)  # fmt: skip
    return typer.Exit(1)


def _other(word: str) -> None:
    @app.command(word, context_settings=ANY, help=f"`claude plugin {word}`: not available here; says so, exits 1.")
    def command(ctx: typer.Context) -> None:
        raise _refuse(word)


for _word in OTHERS:
    _other(_word)
