"""The model layer: the client through the real SDK, providers, fallback, and the scripted Messages API server."""
