"""`-n NAME` in the REPL, in a real pane of a private tmux server, as claude 2.1.332 shows it: the name at the input
line's right (claude: on its prompt box's border) and the terminal's title `✳ NAME`."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.lead_pane import START, lead_route

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_the_name_is_at_the_prompt_and_in_the_title(start_lead: Callable[..., Any]) -> None:
    pane, _server, _ = start_lead({"routes": [lead_route("ok")]}, "-n", "my-feature")
    pane.idle(timeout=START)
    prompt_row = next(line for line in pane.screen().splitlines() if line.startswith(">"))
    assert prompt_row.rstrip().endswith("my-feature"), prompt_row
    pane.wait(lambda _s: pane.tmux.run("display", "-p", "-t", pane.pane, "#{pane_title}").strip() == "✳ my-feature",
              "the terminal title")  # fmt: skip
