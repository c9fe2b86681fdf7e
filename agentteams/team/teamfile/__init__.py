"""Team files (`agentteams launch team.toml`): their typed shape with positions for errors, seeding a running team
from one, and exporting a running team back out."""
