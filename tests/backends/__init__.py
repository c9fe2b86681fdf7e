"""The backends: tmux against a real server on a private socket."""
