"""`agentteams ultrareview`: Claude Code's cloud-hosted multi-agent review, which needs Anthropic's cloud."""

from agentteams.cli.commands.not_here import app_for

app = app_for("ultrareview", "Run a cloud-hosted multi-agent code review.",
              "the cloud-hosted review runs on Anthropic's cloud with a claude.ai account, which agentteams does not "
              "use: ask a team for a review instead (agentteams -p 'review this branch')")  # fmt: skip
