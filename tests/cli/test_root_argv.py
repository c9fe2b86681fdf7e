"""The agent command's line read without typer (cli/root_argv.py) comes to the same flags as typer's reading, for
every option of the command and the lines the Agent SDKs build; any line it is unsure of is left to typer."""

from __future__ import annotations

from typing import Any

import pytest

from agentteams import cli
from agentteams.cli import root_argv
from agentteams.cli.root_options import TYPER_OWN, WORDS
from agentteams.run import agent as run_agent
from agentteams.run.agent import AgentFlags, flags_from_options
from agentteams.run.session_choice import optional_value


def _by_typer(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """The parameters typer hands the command (every one, not only those AgentFlags carries)."""
    from agentteams.cli.commands import agent

    seen: list[dict[str, object]] = []

    def keep(given: dict[str, object]) -> AgentFlags:
        seen.append(dict(given))
        return AgentFlags()

    monkeypatch.setattr(run_agent, "flags_from_options", keep)
    monkeypatch.setattr(run_agent, "start", lambda flags: 0)
    cli.click_command(agent.app)(args=optional_value(argv), prog_name="agentteams", standalone_mode=False)
    assert len(seen) == 1
    seen[0].pop("version")  # typer's own: answered before the command runs
    return seen[0]


def _value_for(kind: str) -> str:
    return "3" if kind == "int" else "some value"


def _every_option() -> list[list[str]]:
    lines = []
    for word, (_, kind) in WORDS.items():
        if kind in ("flag", "unflag"):
            lines.append([word])
        else:
            lines += [[word, _value_for(kind)], [f"{word}={_value_for(kind)}"] if word.startswith("--") else []]
    return [line for line in lines if line]


# option sets the Python Agent SDK turns into command lines (its own builder, not a copy: imported by the test that
# uses it, not at collection in every worker)
SDK_OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"permission_mode": "bypassPermissions", "max_turns": 3, "allowed_tools": ["Read", "Bash"], "model": "sonnet",
     "system_prompt": "be brief", "add_dirs": ["/tmp"], "include_partial_messages": True},
    {"disallowed_tools": ["Write"], "continue_conversation": True, "fork_session": True, "settings": "{}",
     "setting_sources": ["user", "project"], "permission_prompt_tool_name": "stdio", "fallback_model": "haiku"},
]  # fmt: skip


def _sdk_line(options: dict[str, Any]) -> list[str]:
    """What the Python Agent SDK puts on the command line for these options."""
    from claude_agent_sdk import ClaudeAgentOptions
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    built = SubprocessCLITransport(prompt="x", options=ClaudeAgentOptions(cli_path="/bin/true", **options))
    line: list[str] = built._build_command()[1:]
    return line


PLAIN = [
    [], ["hello"], ["-p", "hi"], ["hi", "-p", "--model", "opus"], ["-r"], ["-r", "-p", "x"], ["-r", "abc", "-p"],
    ["--model", "a", "--model", "b"], ["--add-dir", "a", "--add-dir", "b", "--betas", "x"], ["--system-prompt", ""],
    ["--append-system-prompt", "-p"], ["--max-turns", " 7 "], ["--max-turns", "1_0"], ["--no-chrome"],
    ["--chrome", "--no-chrome"], ["-c", "--fork-session", "-p", "go on"], ["-"], ["--allowed-tools=Bash(git:*)"],
]  # fmt: skip
LEFT_TO_TYPER = [
    ["--help"], ["-v"], ["--version"], ["--", "-p"], ["-pc"], ["-p", "a", "b"], ["--no-such-option"], ["--model"],
    ["--verbose=yes"], ["--max-turns", "0"], ["--max-turns", "x"], ["-rabc"], ["--mod", "x"],
]  # fmt: skip


def _reads_as_typer(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    ours = root_argv.parse(optional_value(argv))
    assert ours is not None, "a plain line was left to typer"
    typers = _by_typer(argv, monkeypatch)
    assert ours == typers
    assert flags_from_options(ours) == flags_from_options(typers)  # the real one: the module's is patched here


@pytest.mark.parametrize("argv", [*PLAIN, *_every_option()], ids=repr)
def test_a_plain_line_reads_as_typer_reads_it(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _reads_as_typer(argv, monkeypatch)


@pytest.mark.parametrize("options", SDK_OPTION_SETS, ids=repr)
def test_the_sdk_s_line_reads_as_typer_reads_it(options: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    _reads_as_typer(_sdk_line(options), monkeypatch)


@pytest.mark.parametrize("argv", LEFT_TO_TYPER, ids=repr)
def test_a_line_it_is_unsure_of_is_left_to_typer(argv: list[str]) -> None:
    assert root_argv.parse(optional_value(argv)) is None


def test_typer_s_own_options_are_known_to_the_table() -> None:
    assert {"--help", "--version", "-v"} <= set(TYPER_OWN)
    assert not set(TYPER_OWN) & set(WORDS)
