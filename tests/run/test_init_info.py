"""The pieces of the init line and the initialize answer (agentteams/run/init_info.py): tools in Claude Code's order,
commands from the scopes read and from plugins, their descriptions, the output style, plugins as listed."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from agentteams.errors import AgentTeamsError
from agentteams.run import init_info
from agentteams.settings.plugins import load_plugin
from agentteams.settings.types import Settings


def _plugin(where: Path, manifest: object = None) -> Path:
    (where / "commands" / "sub").mkdir(parents=True)
    if manifest is not None:
        (where / ".claude-plugin").mkdir()
        (where / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (where / "commands" / "greet.md").write_text("## Greet them\n\nHello.\n")
    (where / "commands" / "sub" / "deep.md").write_text("---\ndescription: Deeper\n---\nx\n")
    return where


def _options(cwd: Path, sources: tuple[str, ...], plugins: tuple[Path, ...] = ()) -> SimpleNamespace:
    merged = {"outputStyle": "Terse"} if "local" in sources else {}
    settings = Settings(merged=merged, sources=sources)  # type: ignore[arg-type]
    return SimpleNamespace(cwd=cwd, settings=settings, plugins=tuple(load_plugin(p) for p in plugins))


def test_tools_sort_by_name_with_task_as_agent_and_mcp_tools_last() -> None:
    tools = [SimpleNamespace(name=n) for n in ("Write", "mcp__z__b", "Read", "Task", "Bash", "mcp__a__a")]
    offered = dict.fromkeys(("mcp__z__b", "mcp__a__a"))  # the MCP tools the agent offers now, in its order
    session = SimpleNamespace(tools=tools, agent=SimpleNamespace(tools=offered))
    assert init_info.tool_names(session) == ["Task", "Bash", "Read", "Write", "mcp__z__b", "mcp__a__a"]


def test_a_plugin_s_manifest_names_it_and_its_commands(tmp_path: Path) -> None:
    plugin = load_plugin(_plugin(tmp_path / "dir", {"name": "kit", "version": "1.2.0"}))
    assert (plugin.name, plugin.version, plugin.source) == ("kit", "1.2.0", "kit@inline")
    commands, problems = plugin.commands()
    assert list(commands) == ["kit:greet", "kit:sub:deep"] and problems == []
    assert [init_info.described(c) for c in commands.values()] == ["(kit) Greet them", "(kit) Deeper"]
    unnamed = load_plugin(_plugin(tmp_path / "bare"))
    assert (unnamed.name, unnamed.version) == ("bare", None)
    assert init_info.plugins(SimpleNamespace(plugins=(unnamed,))) == [
        {"name": "bare", "path": str(tmp_path / "bare"), "source": "bare@inline"}]  # fmt: skip


def test_a_plugin_dir_that_is_no_plugin_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(AgentTeamsError, match="not a directory"):
        load_plugin(tmp_path / "missing")
    with pytest.raises(AgentTeamsError, match="not a JSON object"):
        load_plugin(_plugin(tmp_path / "list", ["kit"]))


def test_commands_come_from_the_scopes_read_then_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    (tmp_path / "proj" / ".claude" / "commands").mkdir(parents=True)
    (tmp_path / "proj" / ".claude" / "commands" / "ship.md").write_text("---\nargument-hint: [what, where]\n---\nx\n")
    plugin = _plugin(tmp_path / "kit")
    every = init_info.session_commands(_options(tmp_path / "proj", ("user", "project", "local"), (plugin,)))
    assert list(every.commands) == ["ship", "kit:greet", "kit:sub:deep"]
    ship = every.commands["ship"]
    assert (ship.argument_hint, init_info.described(ship)) == ("what where", "x (project)")
    user_only = init_info.session_commands(_options(tmp_path / "proj", ("user",), (plugin,)))
    assert list(user_only.commands) == ["kit:greet", "kit:sub:deep"]


def test_the_output_style_is_the_settings_else_the_default(tmp_path: Path) -> None:
    assert init_info.output_style(_options(tmp_path, ("local",))) == "Terse"
    assert init_info.output_style(_options(tmp_path, ("user",))) == "default"
