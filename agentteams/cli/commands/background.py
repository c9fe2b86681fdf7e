"""`agentteams agents | stop | kill | respawn | rm`: Claude Code's background sessions, not built yet here (issue 31
replaces this); the word never goes to the model."""

from agentteams.cli.commands.not_here import app_for

app = app_for("", "Manage background sessions (agents, stop, kill, respawn, rm).",
              "background sessions (agents, stop|kill, respawn, rm) are not built yet in agentteams")  # fmt: skip
