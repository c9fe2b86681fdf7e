"""The project's scripted Anthropic Messages API server (SSE and JSON), for tests, the demo and interop runs.

Script format: docs/mock-api.md; `script.py` validates it. Imports only the leaves.
"""

from agentteams.mockapi.script import ScriptError, load_script
from agentteams.mockapi.server import MockServer

__all__ = ["MockServer", "ScriptError", "load_script"]
