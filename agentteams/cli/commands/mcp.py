"""`agentteams mcp`: Claude Code's `claude mcp` (add, add-json, list, get, remove, reset-project-choices), on the
same files with the same lines and exit codes, so each CLI sees the servers the other added."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core

from agentteams.settings import mcp_entries as entries
from agentteams.settings import mcp_scopes as scopes

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None, no_args_is_help=True,
                  help="Configure and manage MCP servers (as `claude mcp`).")  # fmt: skip
VARIADIC = ("-e", "--env", "-H", "--header")  # Claude Code's `<env...>`: each takes every word up to the next option
ICON = {"connected": "\u2714 Connected", "failed": "\u2718 Failed to connect", "disabled":
        "\u2298 Disabled for this project (re-enable via /mcp)", "rejected":
        "\u2718 Rejected (see disabledMcpjsonServers in settings)"}  # fmt: skip
PENDING = "\u23f8 Pending approval (run `claude` to approve)"
AWAITING = ".mcp.json servers are awaiting approval \u2014 run `claude` in this directory to review them."


def spread(args: list[str]) -> list[str]:
    """`-e A=1 B=2` as `-e A=1 -e B=2`: the words after a variadic option, up to the next option or `--`."""
    out: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            return [*out, *args[i:]]
        out.append(word)
        i += 1
        if word in VARIADIC and i < len(args):
            out.append(args[i])
            i += 1
            while i < len(args) and not args[i].startswith("-"):
                out += [word, args[i]]
                i += 1
    return out


class _Variadic(typer.core.TyperCommand):
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, spread(args))


def fail(line: str) -> typer.Exit:
    typer.echo(line, err=True)
    return typer.Exit(1)


def _entry_error(e: Exception) -> typer.Exit:
    return fail(str(e))


ScopeOpt = Annotated[str, typer.Option("-s", "--scope", help="Configuration scope (local, user, or project).")]
SECRET_HELP = "Prompt for an OAuth client secret (not kept by agentteams: refused)."


@app.command(cls=_Variadic, context_settings={"help_option_names": ["-h", "--help"]})
def add(
    name: str,
    command_or_url: Annotated[str, typer.Argument(metavar="COMMAND_OR_URL")],
    args: Annotated[list[str] | None, typer.Argument(help="The command's arguments (after --).")] = None,
    scope: ScopeOpt = "local",
    transport: Annotated[str | None, typer.Option("-t", "--transport", help="stdio, sse or http.")] = None,
    env: Annotated[list[str] | None, typer.Option("-e", "--env", help="KEY=value (repeatable).")] = None,
    header: Annotated[list[str] | None, typer.Option("-H", "--header", help="'Name: value' (repeatable).")] = None,
    client_id: Annotated[str | None, typer.Option("--client-id", help="OAuth client ID.")] = None,
    client_secret: Annotated[bool, typer.Option("--client-secret", help=SECRET_HELP)] = False,
    callback_port: Annotated[int | None, typer.Option("--callback-port", help="OAuth callback port.")] = None,
) -> None:
    """Add an MCP server: `mcp add NAME -- COMMAND ARGS...`, or `mcp add -t http NAME URL`."""
    cwd = Path.cwd()
    try:
        entries.check_name(name)
        where = entries.check_scope(scope, "add MCP server to")
        kind = entries.transport_of(transport)
        env_map, headers = entries.env_of(env or []), entries.headers_of(header or [])
    except entries.McpEntryError as e:
        raise _entry_error(e) from None
    if client_secret:
        raise fail("--client-secret: agentteams keeps no OAuth client secrets; give the server's credentials as a "
                   "header (-H) instead")  # fmt: skip
    if kind == "stdio":
        server: dict[str, Any] = {"type": "stdio", "command": command_or_url, "args": list(args or []), "env": env_map}
        shown = f"{command_or_url} {' '.join(args or [])}"  # a space even without arguments, as claude prints it
        said = [f"Added stdio MCP server {name} with command: {shown} to {where} config"]
    else:
        server = entries.remote_entry(kind, command_or_url, headers, client_id, callback_port)
        said = [f"Added {kind.upper()} MCP server {name} with URL: {command_or_url} to {where} config"]
        if headers:
            said.append(f"Headers: {json.dumps(entries.redacted(headers), indent=2, ensure_ascii=False)}")
    _write(where, cwd, name, server)
    for line in [*said, f"File modified: {scopes.where(where, cwd)}"]:
        typer.echo(line)
    if kind == "stdio" and transport is None and command_or_url.startswith(("http://", "https://")):
        typer.echo(f"\nWarning: The command \"{command_or_url}\" looks like a URL, but is treated as a stdio server "
                   f"because --transport wasn't set.\nIf this is an HTTP server, use: agentteams mcp add --transport "
                   f"http {name} {command_or_url}\nIf this is an SSE server, use: agentteams mcp add --transport sse "
                   f"{name} {command_or_url}", err=True)  # fmt: skip
    if kind == "stdio" and (client_id is not None or callback_port is not None):
        typer.echo("Warning: --client-id, --client-secret, --callback-port, and --xaa only work with HTTP/SSE servers "
                   "and are ignored for stdio.", err=True)  # fmt: skip


def _write(scope: scopes.Scope, cwd: Path, name: str, server: dict[str, Any]) -> None:
    try:
        scopes.add(scope, cwd, name, server)
    except scopes.McpScopeError as e:
        raise fail(str(e)) from None


@app.command("add-json", context_settings={"help_option_names": ["-h", "--help"]})
def add_json(
    name: str,
    json_text: Annotated[str, typer.Argument(metavar="JSON", help="The server's entry, or - to read it from stdin.")],
    scope: ScopeOpt = "local",
    client_secret: Annotated[bool, typer.Option("--client-secret", help=SECRET_HELP)] = False,
) -> None:
    """Add an MCP server (stdio, SSE, HTTP, or WebSocket) with a JSON string, or - to read it from stdin."""
    try:
        entries.check_name(name)
        where = entries.check_scope(scope, "add MCP server to")
        server = entries.json_entry(sys.stdin.read() if json_text == "-" else json_text)
    except entries.McpEntryError as e:
        raise _entry_error(e) from None
    if client_secret:
        raise fail("--client-secret: agentteams keeps no OAuth client secrets")
    _write(where, Path.cwd(), name, server)
    typer.echo(f"Added {server.get('type', 'stdio')} MCP server {name} to {where} config")


@app.command("list", context_settings={"help_option_names": ["-h", "--help"]})
def list_servers() -> None:
    """List configured MCP servers, each connected to for its health (.mcp.json servers not approved here are
    pending and not started)."""
    from agentteams.tools.mcp import health

    cwd = Path.cwd()
    rows = [r for r in health.judge(cwd, _settings(cwd), health.merged(cwd)) if r.health != "rejected"]
    if not rows:
        typer.echo("No MCP servers configured. Use `agentteams mcp add` to add a server.")
        return
    typer.echo("Checking MCP server health\u2026\n")
    for r in health.check(rows):
        typer.echo(f"{r.name}: {entries.target(r.raw)} - {_status(r)}")


def _status(row: Any) -> str:
    if row.health == "pending":
        return PENDING
    return ICON[row.health] + (f" \u2014 {row.reason}" if row.health == "failed" and row.reason else "")


def _settings(cwd: Path) -> dict[str, Any]:
    from agentteams.settings.load import load_settings

    return dict(load_settings(cwd).merged)


@app.command("get", context_settings={"help_option_names": ["-h", "--help"]})
def get(name: str) -> None:
    """Details of one MCP server, with its health (a pending .mcp.json server is not started)."""
    from agentteams.tools.mcp import health

    cwd = Path.cwd()
    rows = health.judge(cwd, _settings(cwd), health.merged(cwd))
    found = [r for r in rows if r.name == name]
    if not found:
        raise fail(_unknown(name, rows))
    [row] = health.check(found)
    status = ICON[row.health] if row.health != "pending" else PENDING  # the reason goes on a line of its own
    lines = [f"{name}:", f"  Scope: {scopes.LABELS[row.scope]}", f"  Status: {status}"]
    if row.health == "failed":
        lines.append(f"  Issue: {row.reason}")
    kind, raw = entries.kind_of(row.raw), row.raw
    lines.append(f"  Type: {kind}")
    if kind == "stdio":
        args = raw["args"] if isinstance(raw.get("args"), list) else []
        env = raw["env"] if isinstance(raw.get("env"), dict) else {}
        lines += [f"  Command: {raw.get('command', '')}", f"  Args: {' '.join(map(str, args))}", "  Environment:"]
        lines += [f"    {k}={v}" for k, v in env.items()]
    else:
        lines.append(f"  URL: {raw.get('url', '')}")
        headers = raw["headers"] if isinstance(raw.get("headers"), dict) else {}
        lines += ["  Headers:", *(f"    {k}: {v}" for k, v in headers.items())] if headers else []
    lines += ["", f"To remove this server, run: agentteams mcp remove {name} -s {row.scope}"]
    typer.echo("\n".join(lines))


def _unknown(name: str, rows: list[Any]) -> str:
    """Claude Code's line for a name it does not have: a near name, else the configured ones."""
    usable = sorted(r.name for r in rows if r.health not in ("pending", "rejected"))
    waiting = any(r.health == "pending" for r in rows)
    near = entries.closest(name, usable)
    if near is not None:
        return f'No MCP server named "{name}". Did you mean "{near}"? Run `agentteams mcp list` to see all.'
    if usable:
        return f'No MCP server named "{name}". Configured servers: {", ".join(usable)}' + (
            f" ({AWAITING})" if waiting else ""
        )
    if waiting:
        return f'No MCP server named "{name}". {AWAITING}'
    return f'No MCP server named "{name}". Run `agentteams mcp add` to add one.'


@app.command("remove", context_settings={"help_option_names": ["-h", "--help"]})
def remove(
    name: str,
    scope: Annotated[
        str | None, typer.Option("-s", "--scope", help="local, user or project (default: where it is).")
    ] = None,
) -> None:
    """Remove an MCP server."""
    cwd = Path.cwd()
    if scope is not None:
        try:
            where = entries.check_scope(scope, "remove MCP server from")
        except entries.McpEntryError as e:
            raise _entry_error(e) from None
        if name not in scopes.read_scope(where, cwd):
            raise fail(f'No MCP server named "{name}" in {where} scope')
        _remove(where, cwd, name, f"Removed MCP server {name} from {where} config")
        return
    having = [s for s in scopes.SCOPES if name in scopes.read_scope(s, cwd)]
    if not having:
        names = sorted({e.name for e in scopes.all_entries(cwd)})
        near = entries.closest(name, names)
        raise fail(f'No MCP server named "{name}". Did you mean "{near}"? Run `agentteams mcp list` to see all.' if near
                   else f'No MCP server named "{name}". Configured servers: {", ".join(names)}' if names
                   else f'No MCP server named "{name}". Run `agentteams mcp add` to add one.')  # fmt: skip
    if len(having) > 1:
        lines = [f'MCP server "{name}" exists in multiple scopes:']
        lines += [f"  - {scopes.LABELS[s]} ({scopes.where(s, cwd)})" for s in having]
        lines += ["", "To remove from a specific scope, use:"]
        lines += [f"  agentteams mcp remove {name} -s {s}" for s in having]
        raise fail("\n".join(lines))
    _remove(having[0], cwd, name, f'Removed MCP server "{name}" from {having[0]} config')


def _remove(scope: scopes.Scope, cwd: Path, name: str, said: str) -> None:
    try:
        scopes.remove(scope, cwd, name)
    except scopes.McpScopeError as e:
        raise fail(str(e)) from None
    typer.echo(f"{said}\nFile modified: {scopes.where(scope, cwd)}")


@app.command("reset-project-choices", context_settings={"help_option_names": ["-h", "--help"]})
def reset_project_choices() -> None:
    """Reset all approved and rejected project-scoped (.mcp.json) servers within this project."""
    from agentteams.settings.load import paths_for

    cwd = Path.cwd()
    try:
        scopes.reset_project_choices(cwd, paths_for(cwd)["local"])
    except scopes.McpScopeError as e:
        raise fail(str(e)) from None
    typer.echo("Project-scoped (.mcp.json) server approvals and rejections stored for this project have been reset.\n"
               "You will be prompted for approval next time you start Claude Code.")  # fmt: skip


@app.command("add-from-claude-desktop", context_settings={"help_option_names": ["-h", "--help"]})
def add_from_claude_desktop(scope: ScopeOpt = "local") -> None:
    """Import MCP servers from Claude Desktop (Mac and WSL only)."""
    raise fail("Unsupported platform - Claude Desktop integration only works on macOS and WSL.")


NOT_HERE = {
    "serve": "agentteams has no MCP server of its own to serve (`claude mcp serve` serves Claude Code's tools)",
    "login": "MCP servers' OAuth sign-in is not supported by agentteams: give a token as a header (-H) instead",
    "logout": "agentteams keeps no OAuth credentials for MCP servers: there is nothing to clear",
}


def _not_here(word: str) -> Any:
    def command(ctx: typer.Context) -> None:
        raise fail(f"agentteams mcp {word}: {NOT_HERE[word]}")

    command.__doc__ = f"Not available in agentteams (`claude mcp {word}`): says so and exits 1."
    return command


for _word in NOT_HERE:
    app.command(_word, context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                                         "help_option_names": ["-h", "--help"]})(_not_here(_word))  # fmt: skip
