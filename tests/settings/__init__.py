"""Settings, custom agents and front matter: how Claude Code's files are read, and what reaches the agent."""
