"""Outside programs the agents drive: tmux (the only importer of libtmux and reader of $TMUX / $TMUX_PANE) and git
(`git.py`, the only runner of git). Imports only the leaves (errors); nothing above it."""
