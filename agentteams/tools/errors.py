"""`ToolInputError`: bad arguments from the model, which the agent loop turns into an error result."""

from __future__ import annotations


class ToolInputError(Exception):
    """Bad arguments from the model; the agent loop turns it into an error result."""
