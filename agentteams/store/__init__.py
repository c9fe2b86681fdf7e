"""Everything shared on disk with Claude Code: paths and names, locks, atomic JSON, records, protocol
messages, teams, mailboxes, tasks, presence, transcripts. Imports only the leaves (errors, diagnostics, pids)."""
