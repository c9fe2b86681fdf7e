"""What a person sees: the REPL (input, rich rendering of agent and team events, questions), the status and watch
dashboards, and every rich console. May import any layer below; never cli."""
