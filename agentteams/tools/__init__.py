"""The tools an agent can call (files, shell, search, tasks, team, messages, subagents, plan mode) and the typed
hooks a runtime lends them. Imports the leaves, store and model; never agent, team, cli or ui."""
