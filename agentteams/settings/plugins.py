"""Plugins given with `--plugin-dir`: each directory's manifest (`.claude-plugin/plugin.json`: name, version) and its
`commands/**/*.md`, which a session offers as `/<plugin>:<command>` as Claude Code does."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from agentteams.errors import AgentTeamsError
from agentteams.settings.commands import COMMAND_NAME, CustomCommand, command_from, markdown_files
from agentteams.settings.frontmatter import FrontMatterError, read_markdown

MANIFEST = Path(".claude-plugin") / "plugin.json"


@dataclass(frozen=True)
class Plugin:
    """One plugin directory: the name its manifest gives (else the directory's), and its version if it says one."""

    name: str
    path: Path
    version: str | None = None

    @property
    def source(self) -> str:
        """Where it came from, as Claude Code says it: `--plugin-dir` plugins are `inline`."""
        return f"{self.name}@inline"

    def commands(self) -> tuple[dict[str, CustomCommand], list[str]]:
        """Its commands by their full name (`plugin:command`), and one line per file that could not be read."""
        found: dict[str, CustomCommand] = {}
        problems: list[str] = []
        for path, parts in markdown_files(self.path / "commands"):
            name = ":".join([self.name, *parts])
            if name in found or not COMMAND_NAME.fullmatch(name):
                continue
            try:
                doc = read_markdown(path)
            except (OSError, UnicodeDecodeError, FrontMatterError) as e:
                problems.append(f"plugin {self.name} command {path}: {e}; skipped")
                continue
            found[name] = command_from(doc, name, "plugin", self.name)
        return dict(sorted(found.items())), problems


def load_plugin(directory: Path) -> Plugin:
    """The plugin at `directory`; AgentTeamsError when it is no directory or its manifest is not a JSON object."""
    where = Path(directory).expanduser().resolve()
    if not where.is_dir():
        raise AgentTeamsError(f"--plugin-dir {directory}: not a directory")
    manifest: object = {}
    if (where / MANIFEST).is_file():
        try:
            manifest = json.loads((where / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise AgentTeamsError(f"--plugin-dir {directory}: {MANIFEST} cannot be read: {e}") from None
    if not isinstance(manifest, dict):
        raise AgentTeamsError(f"--plugin-dir {directory}: {MANIFEST} is not a JSON object")
    name, version = manifest.get("name"), manifest.get("version")
    return Plugin(name if isinstance(name, str) and name.strip() else where.name, where,
                  version if isinstance(version, str) else None)  # fmt: skip
