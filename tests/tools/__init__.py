"""The tools an agent calls: files, Bash and background shells, coordination, todos, web, notebooks and MCP."""
