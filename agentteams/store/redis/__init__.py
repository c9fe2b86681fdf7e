"""The Redis store: the store interface over one Redis (or Valkey) server for teams across machines; the only
importer of `redis`. Never imports store/file."""
