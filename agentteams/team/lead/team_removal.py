"""What is left of a team its lead shuts down as the run ends: its worktrees (as TeamDelete does: clean ones removed,
a dirty one kept and said) and then its files. Imported only when a team goes: it brings git's view of worktrees."""

from __future__ import annotations

from pathlib import Path

from agentteams import diagnostics
from agentteams.errors import NotFoundError
from agentteams.store.api import Teams
from agentteams.tools.team import worktree_git


def remove_team(teams: Teams, team: str, cwd: Path) -> list[str]:
    """Its worktrees and files removed; the warnings (a dirty worktree kept, files that could not go)."""
    _removed, warnings = worktree_git.close_team(teams, team, cwd)
    for line in warnings:  # nobody else says it (its departure's notice was muted): the team goes down as the run ends
        diagnostics.warning("team %s: %s", team, line)
    try:
        warnings += teams.delete(team, force=True)
    except NotFoundError:
        pass
    except OSError as e:  # the team is down; what is left on disk is `agentteams cleanup`'s job
        warnings.append(f"could not remove all of team {team}'s files: {e}")
    return warnings
