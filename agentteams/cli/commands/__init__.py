"""One module per `agentteams` command, each a typer `app`; the agent itself is `agent`. They parse and print; what
they run is composed in `run/` and the layers below."""
