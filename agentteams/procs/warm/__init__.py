"""The per-user warm `-p` server: the launcher side (`client`) and the detached server (`server`)."""
