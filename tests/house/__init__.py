"""The repository itself: its layers and owners, CI's test command, the pinned Claude Code versions, the benches."""
