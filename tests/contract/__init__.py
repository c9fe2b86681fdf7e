"""The store contract: every behaviour the runtimes rely on, run against the file store and the Redis store."""
