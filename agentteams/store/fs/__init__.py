"""The on-disk primitives of every file the store keeps: paths opened without following links, atomic JSON with
quarantine, Claude Code's lock protocol and the kernel queue in front of it, salvage of torn arrays, inotify waits."""
