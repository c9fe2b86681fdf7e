"""The interactive lead's terminal: rich rendering of agent and team events, questions, and the REPL input loop."""
