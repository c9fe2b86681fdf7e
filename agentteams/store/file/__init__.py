"""The file store: the store interface over the JSON files real Claude Code shares (`teams/`, `tasks/`, inboxes),
with locks and inotify waits. Never imports store/redis."""
