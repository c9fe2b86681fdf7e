"""`agentteams auth`: Claude Code's `claude auth`. `status` says which credential the model client would use (read
from the environment and settings, as claude reads them); there is no sign-in here, so `login` and `logout` say so."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None, no_args_is_help=True,
                  help="Manage authentication (as `claude auth`).")  # fmt: skip
HELP = {"help_option_names": ["-h", "--help"]}
PROVIDERS = {"bedrock": "Amazon Bedrock", "vertex": "Google Vertex AI", "foundry": "Microsoft Foundry",
             "mantle": "Amazon Bedrock (Mantle)", "anthropicAws": "Anthropic on AWS",
             "anthropicGoogleCloud": "Anthropic on Google Cloud"}  # fmt: skip


def _credential() -> tuple[str, str, str] | None:
    """(authMethod, the line's label, where it comes from) of the first-party credential in use, or None."""
    for var, method, label in (("ANTHROPIC_API_KEY", "api_key", "API key"),
                               ("ANTHROPIC_AUTH_TOKEN", "oauth_token", "Auth token"),
                               ("CLAUDE_CODE_OAUTH_TOKEN", "oauth_token", "Auth token")):  # fmt: skip
        if os.environ.get(var, "").strip():
            return method, label, var
    from agentteams.settings.load import SettingsError, load_settings

    try:
        helper = load_settings(Path.cwd()).api_key_helper
    except SettingsError:
        helper = None
    return ("api_key_helper", "Auth token", "apiKeyHelper") if helper else None


@app.command(context_settings=HELP)
def status(
    as_json: Annotated[bool, typer.Option("--json", help="Output as JSON (default).")] = False,
    text: Annotated[bool, typer.Option("--text", help="Output as plain text.")] = False,
) -> None:
    """Show authentication status: exit 1 when no credential is found."""
    from agentteams.model.providers import selected
    from agentteams.store.paths import config_root

    provider = selected(os.environ)
    found = None if provider else _credential()
    logged_in = provider is not None or found is not None
    base = os.environ.get("ANTHROPIC_BASE_URL", "").strip()
    if text:
        lines = [f"API provider: {PROVIDERS.get(provider, provider)}"] if provider else []
        lines += [f"{found[1]}: {found[2]}"] if found else []
        lines += [f"Anthropic base URL: {base}"] if base and not provider else []
        lines += [] if logged_in else ["Not logged in. Set ANTHROPIC_API_KEY (agentteams reads its credentials "
                                       "from the environment)."]  # fmt: skip
        typer.echo("\n".join(lines))
    else:
        root = config_root()
        data: dict[str, Any] = {
            "loggedIn": logged_in, "authMethod": "third_party" if provider else found[0] if found else "none",
            "apiProvider": provider or "firstParty", "analyticsDisabled": True,
            "projectsDirectory": str(root / "projects"), "configDirectory": str(root), "loginExpiresAt": None,
        }  # fmt: skip
        if found and found[0] != "oauth_token":
            data["apiKeySource"] = found[2]
        typer.echo(json.dumps(data, indent=2))
    if not logged_in:
        raise typer.Exit(1)


@app.command(context_settings={**HELP, "allow_extra_args": True, "ignore_unknown_options": True})
def login(ctx: typer.Context) -> None:
    """Sign in to an Anthropic account: not done by agentteams (it reads ANTHROPIC_API_KEY and the other
    credentials from the environment); says so and exits 1."""
    typer.echo(
        "agentteams auth login: there is no sign-in here: agentteams uses ANTHROPIC_API_KEY (or "
        "ANTHROPIC_AUTH_TOKEN, apiKeyHelper, a cloud provider's credentials) from the environment",
        err=True,
    )
    raise typer.Exit(1)


@app.command(context_settings=HELP)
def logout() -> None:
    """Log out: agentteams keeps no login of its own, so there is nothing to remove (exits 0, as claude does)."""
    typer.echo("agentteams keeps no login: unset ANTHROPIC_API_KEY (or the credential you set) to log out.")
