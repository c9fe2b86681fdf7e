"""Lets `python -m agentteams` run the CLI."""

from agentteams.cli import main

main()
