"""WebFetch and WebSearch, as Claude Code's."""
