"""`agentteams config [--json]`: the merged settings for this directory and, for each value, the file it came from."""

import re
from pathlib import Path
from typing import Annotated, Any

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
# env values under such names are shown masked: a user's settings may hold a token there (Claude Code allows it)
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
MASK = "***"


def _leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    """(dotted path, scalar) for every value, in the paths `Settings.origins` uses."""
    if isinstance(value, dict) and value:
        return [leaf for k, v in value.items() for leaf in _leaves(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list) and value:
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")]
    return [(path, value)]


def _masked(path: str, value: Any) -> Any:
    name = path.removeprefix("env.")
    return MASK if path.startswith("env.") and SECRET_NAME.search(name) else value


def _origin(origins: dict[str, Any], path: str) -> Any:
    """The source of a leaf: its own, or that of the array element or object it sits in."""
    while path not in origins and path:
        cut = max(path.rfind("."), path.rfind("["))
        path = path[:cut] if cut > 0 else ""
    return origins.get(path)


@app.command()
def config(
    settings: Annotated[
        str | None, typer.Option("--settings", help="Also a settings file or JSON, as the agent.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show the settings in effect here (user, project, local, --settings, managed merged) and where each came from."""
    import json

    from agentteams import diagnostics
    from agentteams.settings.load import load_settings, paths_for

    found = load_settings(Path.cwd(), flag=settings)
    rows = []
    for path, value in _leaves(found.merged, ""):
        if not path:
            continue
        source = _origin(found.origins, path)
        rows.append({"key": path, "value": _masked(path, value), "scope": source.scope if source else None,
                     "file": source.path if source else None})  # fmt: skip
    if as_json:
        files = {scope: str(p) for scope, p in paths_for(Path.cwd()).items()}
        masked = json.loads(json.dumps(found.merged))
        for name in masked.get("env", {}) if isinstance(masked.get("env"), dict) else ():
            masked["env"][name] = _masked(f"env.{name}", masked["env"][name])
        out = {"settings": masked, "values": rows, "files": files, "problems": list(found.problems)}
        typer.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return
    for problem in found.problems:
        diagnostics.warning("%s", problem)
    if not rows:
        typer.echo("no settings: none of the settings files exists or sets anything")
    width = max((len(r["key"]) for r in rows), default=0)
    for row in rows:
        where = f"{row['scope']}: {row['file']}" if row["scope"] else "?"
        typer.echo(f"{row['key']:<{width}}  {json.dumps(row['value'], ensure_ascii=False)}  ({where})")
