"""`agentteams setup-token`: a Claude subscription's long-lived token, which needs claude.ai's sign-in."""

from agentteams.cli.commands.not_here import app_for

app = app_for("setup-token", "Set up a long-lived authentication token.",
              "a Claude subscription token needs claude.ai's browser sign-in, which agentteams does not do: "
              "set ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`) instead")  # fmt: skip
