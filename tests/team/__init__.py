"""Teams: the lead and teammate runtimes, spawning, delivery, steering, budgets, survival, worktrees and nodes."""
