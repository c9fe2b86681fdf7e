"""The lead's runtime and what only a lead does: adopting a team on resume, restarting teammates at their next pause,
live mode and model changes, answering permission requests, team hooks, costs. May import team/spawn, team/nodes."""
