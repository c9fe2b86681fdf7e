"""Session transcripts in Claude Code's JSONL schema: written as an agent works (`writer`), read back into a
conversation and found by session (`reader`)."""
