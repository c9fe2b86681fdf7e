"""Process machinery: the fork server, the teammate launchers, the warm `-p` server and the private socket directory.
Imports nothing of team/, run/ or cli/: what a child runs is handed to it as an entry point string."""
