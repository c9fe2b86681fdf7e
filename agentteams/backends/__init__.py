"""Where teammate processes run: tmux (the only importer of libtmux and reader of $TMUX / $TMUX_PANE).
Imports only the leaves (errors); nothing above it."""
