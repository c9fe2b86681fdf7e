"""The interactive lead: the REPL in a real pane, its slash commands, and what the renderer prints."""
