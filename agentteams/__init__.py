"""agentteams: a Claude-Code-compatible agent CLI whose headline feature is agent teams."""

__version__ = "0.1.0"
# the Claude Code release whose command line, files and SDK protocol this one matches (the interop tier pins it):
# what a driving Agent SDK is told in `claude_code_version`, so that it checks its minimum against the protocol spoken
CLAUDE_CODE_COMPAT = "2.1.332"
