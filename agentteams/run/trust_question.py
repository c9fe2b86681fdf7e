"""The workspace-trust question of an interactive session: asked once for a folder not yet trusted, before any of its
settings, `env`, hooks, MCP servers, commands or agents apply; the answer is kept where Claude Code keeps it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from agentteams.errors import AgentTeamsError
from agentteams.settings import trust

QUESTION = """Do you trust the files in this folder?

  {folder}

agentteams will read this folder's settings and may run what they name: hooks, MCP servers, the environment they
set (where the model is asked, for one). A repository you cloned from someone else can name anything there.

  1. Yes, I trust this folder
  2. No, exit
"""


def ensure_trusted(folder: Path, *, ask: Callable[[str], str] = input, interactive: bool | None = None) -> None:
    """Return once `folder` is trusted (asking the person when it is not yet); raises AgentTeamsError when they say
    no, or when there is no terminal to ask at."""
    if trust.trusted_by(folder) is not None:
        return
    if not (sys.stdin.isatty() if interactive is None else interactive):
        raise AgentTeamsError(f"{folder} is not trusted and there is no terminal to ask: run agentteams there once")
    print(QUESTION.format(folder=folder), flush=True)
    try:
        answer = ask("Enter 1 or 2: ").strip().lower()
    except EOFError:
        answer = ""
    if answer in ("1", "y", "yes"):
        try:
            trust.trust(folder)
        except AgentTeamsError as e:  # trusted for this session all the same: the person said so
            print(f"agentteams: warning: {e}", file=sys.stderr, flush=True)
        return
    raise AgentTeamsError(f"{folder} is not trusted: nothing of it was loaded or run")
