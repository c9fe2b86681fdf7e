"""The team's tools: TeamCreate, TeamDelete and SendMessage, the task tools, TeamMerge, and teammates' worktrees as
git sees them."""
