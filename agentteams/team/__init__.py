"""The team runtimes: lead, teammate, spawning, delivery, the status view and cleanup.
Imports everything below it (leaves, store, model, backends, tools, agent); never cli or ui."""
