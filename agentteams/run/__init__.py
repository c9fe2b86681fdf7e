"""Composing a run: the interactive lead, `-p`, stream-json, a teammate, the demo; which session a run goes on with.
May import every layer but cli."""
