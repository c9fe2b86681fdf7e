"""The tools an agent can call: files, shell, search, tasks, team, messages, subagents, plan mode."""
