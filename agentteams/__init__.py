"""agentteams: a Claude-Code-compatible agent CLI whose headline feature is agent teams."""

__version__ = "0.1.0"
