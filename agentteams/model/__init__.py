"""The model layer: request/response types, the anthropic SDK client, aliases and pricing."""
