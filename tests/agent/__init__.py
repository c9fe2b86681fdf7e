"""The agent: its loop, permissions, hooks, memory, compaction and plan mode."""
