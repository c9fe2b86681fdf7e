"""Starting teammates: the spawner interface and its tmux and in-process kinds, the lead's roster, spawn options,
worktrees, and teammates started before their panes. May import store, model, backends, tools, agent, team's top."""
