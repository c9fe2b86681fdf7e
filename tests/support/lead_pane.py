"""The interactive lead (`agentteams` without -p) in a pane of a private tmux server, as the REPL tests drive it:
the pane (typing, waiting on the screen), its key and timeouts, the scripted lead's turns, and the requests it sent.
Tests start one through the `start_lead` and `start_repl` fixtures (tests/conftest.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

API_KEY = "sk-ant-test-repl-key"
IDLE = "/help for commands · Ctrl-D to leave"  # the toolbar while no turn runs: the prompt is back
START = 60.0  # seconds for a cold start (the anthropic SDK import alone is ~2.6 s of CPU)
STEP = 20.0  # seconds for anything after that


class LeadPane:
    """`agentteams` running interactively in the only pane of a tmux server of our own."""

    def __init__(self, tmux: Tmux, cli: Cli, env: dict[str, str], cwd: Path, args: list[str]) -> None:
        self.tmux = tmux
        argv = cli.argv("--teammate-mode", "in-process", *args)
        options = {"remain-on-exit": "on", "history-limit": "10000"}
        self.pane = tmux.start(env, cwd, argv, size=(160, 50), options=options)

    def screen(self) -> str:
        """Everything the pane has shown, scrollback included, wrapped lines joined."""
        return self.tmux.capture(self.pane, scrollback=True)

    def type(self, text: str) -> None:
        self.tmux.send(self.pane, text, literal=True)

    def press(self, *keys: str) -> None:
        self.tmux.send(self.pane, *keys)

    def submit(self, text: str) -> None:
        """Type a line, wait until the input line shows it, press Enter."""
        self.type(text)
        self.wait(lambda s: input_line(s) == text, f"{text!r} on the input line")
        self.press("Enter")

    def wait(self, cond: Callable[[str], bool], what: str, timeout: float = STEP) -> float:
        last = [""]

        def check() -> bool:
            last[0] = self.screen()
            return cond(last[0])

        return wait_until(check, timeout, what, interval=0.05, explain=lambda: f"--- pane ---\n{last[0]}")

    def wait_text(self, text: str, count: int = 1, timeout: float = STEP) -> float:
        return self.wait(lambda s: s.count(text) >= count, f"{text!r} ×{count}", timeout)

    def idle(self, timeout: float = STEP) -> float:
        return self.wait(lambda s: IDLE in s, "the prompt to be back", timeout)

    def exit_status(self) -> int | None:
        """The process's exit status once it has ended, else None."""
        return self.tmux.exit_status(self.pane)


# what `start_repl` gives a test: start the lead on a script (and arguments), get its pane and server
Start = Callable[..., tuple[LeadPane, MockServer]]

# the lead's prompt, a permission question's (three choices), or the leave question's
PROMPT = re.compile(r"^(>|1 yes · .*· 3 no \(add what to do instead\) >|Shut down the team .*\[Y/n\])(.*)$")
QUESTION = "3 no (add what to do instead) >"  # the end of a permission question's prompt


def input_line(screen: str) -> str:
    """The text after the last prompt on the screen (the line being edited)."""
    found = [m.group(2) for m in map(PROMPT.match, screen.splitlines()) if m]
    return found[-1].strip() if found else ""


def run(pane: LeadPane, command: str, shows: str) -> str:
    """Type a command, wait for `shows` to appear once more and the prompt to be back; the screen from the
    command's line on."""
    before = pane.screen().count(shows)
    pane.submit(command)
    pane.wait(lambda s: s.count(shows) > before, f"{command}: {shows!r}")
    pane.idle()
    screen = pane.screen()
    return screen[screen.rfind(f"> {command}") :]


def lead_route(*turns: Any) -> dict[str, Any]:
    return {"name": "lead", "match": {"tools": True}, "turns": list(turns), "idle": "IDLE-ANSWER"}


def model_calls(server: MockServer) -> list[dict[str, Any]]:
    """The request bodies of every Messages API call so far."""
    return [r["body"] for r in server.requests if r["method"] == "POST" and r["path"].split("?")[0] == "/v1/messages"]


def tool_turn(tool: str, **args: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": tool, "input": args}]}


def approve_shutdown() -> dict[str, Any]:
    """A teammate turn, once a shutdown_request arrives: SendMessage a shutdown_response approving it."""
    answer = {"type": "shutdown_response", "request_id": r'{{re:requestId\W+([^\s"\\]+)}}', "approve": True}
    return {"wait_for_last": "shutdown_request", **tool_turn("SendMessage", to="team-lead", message=answer)}
