"""The lead's `TeamMerge` tool: review (`review: true`) or merge a teammate's worktree branch back into the lead's
branch; a conflict is reported with its files and the merge aborted (never a half-merged tree)."""

from __future__ import annotations

from typing import Any, ClassVar

from agentteams.tools.base import ToolContext, ToolResult, require_str
from agentteams.tools.team.task_tools import CoordinationTool

DIFF_CHARS = 30_000  # a review longer than this is cut: the model reads the rest with git itself


class TeamMergeTool(CoordinationTool):
    name = "TeamMerge"
    description = (
        'Bring a teammate\'s work back: each teammate spawned with isolation "worktree" commits on its own branch. '
        "With review: true, show what its branch changed (and any files it left uncommitted); otherwise merge the "
        "branch into your current branch (or `into`), squashed into one commit with squash: true. A conflict "
        "aborts the merge and names the conflicting files: your checkout is left exactly as it was."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The teammate whose branch to merge."},
            "into": {"type": "string", "description": "The branch to merge into (default: your current branch)."},
            "squash": {"type": "boolean", "description": "One commit instead of a merge commit."},
            "review": {"type": "boolean", "description": "Only show the branch's diff; merge nothing."},
        },
        "required": ["name"],
    }

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from agentteams.tools.team import worktree_git  # git's module: loaded by a merge, not by offering the tool

        team = ctx.team_name
        if not team:
            return ToolResult.error("There is no team: TeamMerge merges a teammate's worktree branch.")
        if not ctx.is_lead:
            return ToolResult.error(f'Only the lead of team "{team}" merges teammates\' branches.')
        tree = worktree_git.find_tree(ctx.store.teams, team, require_str(args, "name"), ctx.cwd)
        into = args.get("into") if isinstance(args.get("into"), str) and args.get("into") else None
        if args.get("review") is True:
            text = worktree_git.diff(tree, into)
            cut = f"\n... ({len(text) - DIFF_CHARS} more characters)" if len(text) > DIFF_CHARS else ""
            return ToolResult(text[:DIFF_CHARS] + cut, data={"branch": tree.branch})
        if ctx.hooks.permission_mode() == "plan":
            return ToolResult.error("Plan mode: nothing may change yet, so no merge. Review with review: true.")
        try:
            said = worktree_git.merge(tree, into, squash=args.get("squash") is True)
        except worktree_git.MergeConflict as e:
            return ToolResult(str(e), is_error=True, data={"branch": tree.branch, "conflicts": e.files})
        return ToolResult(said, data={"branch": tree.branch})
