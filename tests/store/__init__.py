"""The store layer: the file and Redis stores' records, inboxes, tasks, locks, signatures and transcripts."""
