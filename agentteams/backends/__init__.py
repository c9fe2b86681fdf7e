"""Spawn backends: where a teammate process runs (tmux panes; in-process threads)."""
