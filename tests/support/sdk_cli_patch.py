"""Points an unchanged Claude Agent SDK program at the CLI under test ($AGENTTEAMS_SDK_CLI) by patching the SDK's
`SubprocessCLITransport._find_cli`; optionally logs each message the SDK parses ($AGENTTEAMS_SDK_TRACE, JSON lines).
A pytest plugin (`-p tests.support.sdk_cli_patch`), or a runner: `python -m tests.support.sdk_cli_patch FILE ARGS`."""

from __future__ import annotations

import json
import os
import runpy
import sys
from typing import Any

CLI_VAR = "AGENTTEAMS_SDK_CLI"
TRACE_VAR = "AGENTTEAMS_SDK_TRACE"


def _traced(parse: Any, trace: str) -> Any:
    def parse_message(data: dict[str, Any]) -> Any:
        message = parse(data)
        if message is not None:
            line: dict[str, Any] = {"kind": type(message).__name__, "subtype": getattr(message, "subtype", None)}
            event = getattr(message, "event", None)
            if isinstance(event, dict):
                line["event"] = event.get("type")
            with open(trace, "a", encoding="utf-8") as out:
                out.write(json.dumps(line) + "\n")
        return message

    return parse_message


def patch() -> None:
    """Make the SDK start $AGENTTEAMS_SDK_CLI (when set) wherever it would look for `claude`."""
    from claude_agent_sdk._internal import client as internal_client
    from claude_agent_sdk._internal import message_parser
    from claude_agent_sdk._internal.transport import subprocess_cli

    cli = os.environ.get(CLI_VAR)
    if cli:
        subprocess_cli.SubprocessCLITransport._find_cli = lambda self: cli  # type: ignore[method-assign]
    trace = os.environ.get(TRACE_VAR)
    if trace:
        message_parser.parse_message = _traced(message_parser.parse_message, trace)
        internal_client.parse_message = message_parser.parse_message  # type: ignore[attr-defined]


def pytest_configure(config: Any) -> None:
    patch()


def main(argv: list[str]) -> None:
    patch()
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
