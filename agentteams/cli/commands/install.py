"""`agentteams install`: Claude Code's native-build installer; agentteams is a Python package with no native build."""

from agentteams.cli.commands.not_here import app_for

app = app_for("install", "Install the Claude Code native build.",
              "agentteams has no native build: it is a Python package (pip install --upgrade agentteams)")  # fmt: skip
