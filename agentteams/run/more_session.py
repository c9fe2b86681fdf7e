"""What Claude Code 2.1.332's newer options change in the session itself: `--agent` (the session runs as that agent
type: its prompt, tools and model), `-w/--worktree` (the session runs in a new git worktree of the repository)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from agentteams.errors import AgentTeamsError

if TYPE_CHECKING:
    from agentteams.agent.session_options import SessionOptions
    from agentteams.settings.agents import AgentCatalog

# words for a worktree given no name (adjective-verb-animal, as claude names them): ours, short lists
_FIRST = ("bright", "calm", "clever", "eager", "gentle", "quiet", "brave", "merry", "swift", "tidy")
_SECOND = ("drifting", "herding", "humming", "leaping", "roaming", "sailing", "singing", "waving", "weaving", "racing")
_THIRD = ("badger", "bear", "crane", "falcon", "heron", "lynx", "otter", "panda", "robin", "walrus")


def run_as_agent(name: str, options: SessionOptions, catalog: AgentCatalog, *, model_given: bool) -> None:
    """`--agent NAME`: the session's system prompt is the agent type's (unless --system-prompt gives one), its tools
    the type's, its model the type's unless --model says otherwise; an unknown name is one line naming the known."""
    from agentteams.settings.agents import built_in_type

    found = catalog.get(name) or built_in_type(name)
    if found is None:
        known = ", ".join(catalog.names())
        raise AgentTeamsError(f"--agent {name!r} not found. Available agents: {known}")
    if options.system_prompt is None and found.prompt:
        options.system_prompt = found.prompt
    if found.tools is not None and options.builtin_tools is None:
        options.builtin_tools = found.tools
    options.disallowed_tools = [*options.disallowed_tools, *found.disallowed_tools]
    if not model_given and found.model and found.model != "inherit":
        options.model = found.model
    if found.max_turns is not None and options.max_turns is None:
        options.max_turns = found.max_turns


def enter_worktree(name: str, cwd: Path) -> Path:
    """`-w [NAME]`: a git worktree at the repository's `.claude/worktrees/NAME` on branch `worktree-NAME` (made
    unless it is there already), locked as claude locks it, and made this process's working directory."""
    from agentteams.backends import git

    root = git.toplevel(cwd)
    if root is None:
        raise AgentTeamsError(f"Can only use --worktree in a git repository, but {cwd} is not a git repository")
    name = name.strip() or "-".join(secrets.choice(words) for words in (_FIRST, _SECOND, _THIRD))
    if "/" in name or name.startswith(".") or not git.valid_branch(root, f"worktree-{name}"):
        raise AgentTeamsError(f"--worktree: {name!r} is not a usable worktree name")
    path = root / ".claude" / "worktrees" / name
    if not (path / ".git").exists():
        git.add_worktree(root, path, f"worktree-{name}", git.head(root))
        git.run(root, "worktree", "lock", "--reason", "a session runs in it", str(path), check=False)
    os.chdir(path)
    return path
