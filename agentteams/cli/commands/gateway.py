"""`agentteams gateway`: Claude Code's enterprise auth and telemetry gateway, a hosted-service feature."""

from agentteams.cli.commands.not_here import app_for

app = app_for("gateway", "Run the enterprise auth/telemetry gateway.",
              "the enterprise auth/telemetry gateway is part of Claude Code, not agentteams")  # fmt: skip
