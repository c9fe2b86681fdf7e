"""One agent: the loop, permissions, prompts, and the composition of a session.
Imports the leaves, store, model and tools; never team, cli or ui."""
