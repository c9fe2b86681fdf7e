"""`agentteams import`: Claude Code's import of another agent's config (which claude 2.1.332 itself has not built)."""

from agentteams.cli.commands.not_here import app_for

app = app_for("import", "Import config from another AI coding agent.",
              "importing another agent's config is not available (nor in claude 2.1.332): edit "
              "~/.claude/settings.json or use `agentteams mcp add`")  # fmt: skip
