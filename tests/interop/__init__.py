"""Claude Code compatibility: tests that run the real CLI, and what it wrote (golden files) or decided."""
