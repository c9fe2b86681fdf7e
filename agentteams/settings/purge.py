"""What `claude purge` deletes of a project's (or every project's) Claude Code data on this computer: its
transcripts folder, each of its sessions' task list, debug log and file history, and its entry in the state file;
the plan is shown first and carried out only once confirmed."""

from __future__ import annotations

import contextlib
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentteams.settings.mcp_scopes import McpScopeError, read_state_for_update, write_state
from agentteams.store.paths import config_root, project_slug

Kind = Literal["dir", "file", "config"]


@dataclass(frozen=True)
class Item:
    """One thing to delete: a folder, a file, or a project's entry (`target` is then its key)."""

    kind: Kind
    target: str
    what: str

    def label(self) -> str:
        shown = f'projects["{self.target}"]' if self.kind == "config" else self.target
        return f"  {self.kind + ':':<8}{' ' if self.kind == 'file' else ''}{shown}\n           {self.what}"


def _projects() -> dict[str, object]:
    try:
        projects = read_state_for_update().get("projects")
    except McpScopeError:
        return {}
    return projects if isinstance(projects, dict) else {}


ENTRY = "project entry in ~/.claude.json (trust, history, MCP servers)"


def plan(project: Path | None) -> list[Item]:
    """The items for the project at `project` (None: every project), only those that exist."""
    root = config_root()
    if project is None:
        items = [Item("dir", str(root / name), what) for name, what in (
            ("projects", "all project transcripts (.jsonl), memory/ and files saved from connectors"),
            ("tasks", "all session task lists"), ("debug", "all session debug logs"),
            ("file-history", "all session file edit history"))
            if (root / name).is_dir()]  # fmt: skip
        return items + [Item("config", key, ENTRY) for key in _projects()]
    folder = root / "projects" / project_slug(str(project))
    items = []
    for transcript in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        sid = transcript.stem
        for kind, path, what in (("dir", root / "tasks" / sid, "tasks"), ("file", root / "debug" / f"{sid}.txt",
                                 "debug log"), ("dir", root / "file-history" / sid, "file edit history")):  # fmt: skip
            if path.is_dir() if kind == "dir" else path.is_file():
                items.append(Item(kind, str(path), f"{what} for session {sid}"))  # type: ignore[arg-type]
    if folder.is_dir():
        items.append(Item("dir", str(folder), "project transcripts (.jsonl) and memory/"))
    if str(project) in _projects():
        items.append(Item("config", str(project), ENTRY))
    return items


def carry_out(items: list[Item]) -> int:
    """Delete the items (folders whole, never following a link out of them); how many were deleted."""
    done = 0
    keys = [i.target for i in items if i.kind == "config"]
    for item in items:
        if item.kind == "config":
            continue
        path = Path(item.target)
        with contextlib.suppress(FileNotFoundError):
            if item.kind == "dir" and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            done += 1
    if keys:
        state = read_state_for_update()
        projects = state.get("projects")
        if isinstance(projects, dict):
            done += sum(projects.pop(k, None) is not None for k in keys)
            write_state(state)
    return done


def notes(single: bool) -> list[str]:
    """Claude Code's lines on stderr about what a purge leaves (shell snapshots, the state file's backups)."""
    root, said = config_root(), []
    if single and (root / "shell-snapshots").is_dir():
        said.append("shell-snapshots/ are not project-scoped and will not be touched")
    if (root / "backups").is_dir():
        which = "this project entry" if single else "project entries"
        said.append(f"backups/ may still contain {which} in old .claude.json snapshots ({root / 'backups'}); at most "
                    "5 are kept and they rotate out automatically")  # fmt: skip
    return said
