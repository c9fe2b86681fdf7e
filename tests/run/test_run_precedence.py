"""Flags, then the environment where Claude Code reads it, then the settings, then our defaults: one table pins
which source each value of a run comes from (run/precedence.py)."""

from __future__ import annotations

import pytest

from agentteams.errors import AgentTeamsError
from agentteams.run.precedence import Asked, Chosen, Configured, choose

NONE = Configured()
FILES = Configured(model="haiku", permission_mode="plan", teammate_mode="in-process")
ENV = {"ANTHROPIC_MODEL": "opus", "CLAUDE_CODE_TEAMMATE_COMMAND": "claude"}

# (case, asked, configured, environment, default model, expected)
TABLE = [
    ("nothing anywhere: our defaults", Asked(), NONE, {}, "default", Chosen("default", "default", "auto", None)),
    ("the settings over the defaults", Asked(), FILES, {}, "default", Chosen("haiku", "plan", "in-process", None)),
    ("ANTHROPIC_MODEL over the settings' model", Asked(), FILES, ENV, "default",
     Chosen("opus", "plan", "in-process", "claude")),
    ("the flags over everything", Asked(model="sonnet", permission_mode="acceptEdits", teammate_mode="tmux",
                                        teammate_command="mine"), FILES, ENV, "default",
     Chosen("sonnet", "acceptEdits", "tmux", "mine")),
    ("skipping permissions over any mode", Asked(permission_mode="plan", skip_permissions=True), FILES, {}, "default",
     Chosen("haiku", "bypassPermissions", "in-process", None)),
    ("Claude Code's auto mode is our acceptEdits", Asked(permission_mode="auto"), NONE, {}, "default",
     Chosen("default", "acceptEdits", "auto", None)),
    ("bubble (a teammate asks its lead) is default", Asked(), Configured(permission_mode="bubble"), {}, "default",
     Chosen("default", "default", "auto", None)),
    ("a team file's lead model after the flag, before the environment", Asked(file_model="haiku"), NONE, ENV,
     "sonnet", Chosen("haiku", "default", "auto", "claude")),
    ("launch's default model", Asked(), NONE, {}, "sonnet", Chosen("sonnet", "default", "auto", None)),
    ("a blank ANTHROPIC_MODEL names nothing", Asked(), FILES, {"ANTHROPIC_MODEL": "  "}, "default",
     Chosen("haiku", "plan", "in-process", None)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "asked", "configured", "env", "default", "expected"), TABLE, ids=[t[0] for t in TABLE]
)
def test_each_value_comes_from_the_first_place_that_names_it(
    case: str, asked: Asked, configured: Configured, env: dict[str, str], default: str, expected: Chosen
) -> None:
    assert choose(asked, configured, env, default_model=default) == expected, case


def test_an_unknown_teammate_mode_is_one_line() -> None:
    with pytest.raises(AgentTeamsError, match="--teammate-mode must be one of auto, tmux, in-process, got 'pane'"):
        choose(Asked(teammate_mode="pane"), NONE, {})
