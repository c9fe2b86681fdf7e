"""Our own processes around a run: the fork server and its launchers, the pane's launcher, the warm `-p` server."""
