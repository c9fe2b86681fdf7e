"""The fault suite: injected faults, each test counting what it did in one table at the end of the run."""
