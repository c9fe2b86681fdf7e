"""MCP servers as tools: configuration (`config`), connections on an event-loop thread of their own (`hub`), and
the `mcp__<server>__<tool>` tools the agent calls (`tool`); the one owner of the `mcp` SDK."""
