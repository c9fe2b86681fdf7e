"""MCP configuration and rules without a server: where servers come from and which wins, `${VAR}` expansion,
the approval of project servers, bad input as one line, the rules naming MCP tools, the teammate command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentteams.agent.permissions.policy import PermissionPolicy, parse_rules
from agentteams.run.agent import mcp_flags
from agentteams.team.spawn.base import SpawnRequest, teammate_argv
from agentteams.tools.mcp.config import McpConfigError, McpFlags, Pending, ServerConfig, discover, expand
from agentteams.tools.mcp.hub import McpHub, describe
from agentteams.tools.mcp.names import rule_names, tool_name


def entry(tag: str) -> dict[str, object]:
    return {"command": "server", "args": [tag]}


def servers(flags: McpFlags, cwd: Path, settings: dict[str, object] | None = None) -> dict[str, tuple[str, str]]:
    found = discover(flags, cwd, settings or {}, env={})
    assert not found.problems, found.problems
    return {s.name: (s.origin, s.args[0] if s.args else s.url) for s in found.servers}


def test_expansion_as_claude_code_documents_it() -> None:
    env = {"HOME": "/h", "EMPTY": ""}
    assert expand("${HOME}/x", env) == "/h/x"
    assert expand("${MISSING:-fallback} ${HOME:-no}", env) == "fallback /h"
    assert expand("${EMPTY:-d}|${EMPTY}", env) == "d|"
    assert expand("${MISSING} $HOME", env) == "${MISSING} $HOME"  # unset stays as written; bare $VAR is not expanded


def test_every_source_and_which_wins(config_root: Path, tmp_path: Path) -> None:
    cwd = tmp_path / "proj"
    cwd.mkdir()
    state = {
        "mcpServers": {"a": entry("user"), "b": entry("user"), "c": entry("user")},
        "projects": {str(cwd.resolve()): {"mcpServers": {"c": entry("local")}, "enabledMcpjsonServers": ["b"]}},
    }
    (config_root / ".claude.json").write_text(json.dumps(state))  # where `claude mcp add` keeps them
    (cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {"b": entry("project"), "d": entry("project")}}))
    flag = json.dumps({"mcpServers": {"e": {"type": "http", "url": "http://localhost:${PORT:-9}/mcp"}}})
    # a settings file's `mcpServers` is no source: claude 2.1.332 reads none, so a repository's could start under us
    got = servers(McpFlags((flag,)), cwd, {"mcpServers": {"f": entry("settings")}})
    assert got == {"a": ("user", "user"), "b": ("project", "project"), "c": ("local", "local"),
                   "e": ("flag", "http://localhost:9/mcp")}  # fmt: skip
    found = discover(McpFlags((flag,)), cwd, {}, env={})
    assert [(p.name, p.why.split(":")[0]) for p in found.pending] == [("d", "needs approval")]
    assert servers(McpFlags((flag,), strict=True), cwd) == {"e": ("flag", "http://localhost:9/mcp")}


@pytest.mark.parametrize(
    ("settings", "started"),
    [
        ({}, set()),
        ({"enableAllProjectMcpServers": True}, {"x", "y"}),
        ({"enabledMcpjsonServers": ["x"]}, {"x"}),
        ({"enableAllProjectMcpServers": True, "disabledMcpjsonServers": ["y"]}, {"x"}),  # a refusal wins
    ],
)
def test_project_servers_start_only_when_approved(
    config_root: Path, tmp_path: Path, settings: dict[str, object], started: set[str]
) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"x": entry("x"), "y": entry("y")}}))
    assert set(servers(McpFlags(), tmp_path, settings)) == started


def test_a_bad_flag_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(McpConfigError, match="not valid JSON"):
        mcp_flags(["{nope"], False, tmp_path)
    with pytest.raises(McpConfigError, match=r"cannot read --mcp-config file .*missing\.json"):
        mcp_flags(["missing.json"], False, tmp_path)
    with pytest.raises(McpConfigError, match="'s': `command` is required"):
        mcp_flags(['{"mcpServers": {"s": {"args": []}}}'], False, tmp_path)
    with pytest.raises(McpConfigError, match="transport type 'ws' is not supported"):
        mcp_flags(['{"mcpServers": {"s": {"type": "ws", "url": "ws://x"}}}'], False, tmp_path)
    assert mcp_flags(['{"mcpServers": {}}'], True, tmp_path) == McpFlags(('{"mcpServers": {}}',), True)


def test_a_bad_project_file_is_a_problem_line_not_a_failure(config_root: Path, tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{broken")
    state = {"mcpServers": {"ok": entry("ok"), "bad": {"command": 3}}}  # the user scope, as `mcp add -s user` keeps it
    (config_root / ".claude.json").write_text(json.dumps(state))
    found = discover(McpFlags(), tmp_path, {}, env={})
    assert [s.name for s in found.servers] == ["ok"]
    assert len(found.problems) == 2 and "not valid JSON" in found.problems[0] and "'bad'" in found.problems[1]


def test_rules_name_mcp_tools_as_claude_code() -> None:
    echo, other = tool_name("srv", "echo"), tool_name("srv2", "echo")
    assert tool_name("my.server", "do it") == "mcp__my_server__do_it"
    assert rule_names("mcp__srv", echo, deny=False) and not rule_names("mcp__srv", other, deny=False)
    assert rule_names("mcp__srv__*", echo, deny=False) and not rule_names("mcp__srv__*", other, deny=False)
    assert not rule_names("mcp__*", echo, deny=False)  # an unanchored allow wildcard allows nothing
    assert rule_names("mcp__*", echo, deny=True)  # but denies every MCP tool
    assert not rule_names("mcp__srv__write", echo, deny=True)


def test_the_policy_applies_mcp_rules(tmp_path: Path) -> None:
    policy = PermissionPolicy(mode="default", allowed=parse_rules("mcp__srv"), interactive=False, cwd=tmp_path,
                              disallowed=parse_rules("mcp__srv__write mcp__bad__*"))  # fmt: skip
    assert policy.decide("mcp__srv__echo", "execute").behavior == "allow"
    assert policy.decide("mcp__srv__write", "execute").behavior == "deny"
    assert policy.decide("mcp__bad__echo", "execute").behavior == "deny"
    assert policy.decide("mcp__other__echo", "execute").behavior == "deny"  # headless: nobody to ask


def test_the_teammate_command_line_carries_the_leads_mcp_flags(tmp_path: Path) -> None:
    req = SpawnRequest("alice", "t", "blue", tmp_path, "sid", "claude-sonnet-4-5",
                       mcp=McpFlags(('{"mcpServers": {}}', "servers.json"), strict=True))  # fmt: skip
    argv = teammate_argv(req, ["agentteams"])
    at = argv.index("--mcp-config")
    assert argv[at : at + 5] == ["--mcp-config", '{"mcpServers": {}}', "--mcp-config", "servers.json",
                                 "--strict-mcp-config"]  # fmt: skip
    assert "--mcp-config" not in teammate_argv(SpawnRequest("b", "t", "blue", tmp_path, "sid", "m"), ["x"])


def test_slash_mcp_lists_each_server_and_its_state() -> None:
    hub = McpHub([ServerConfig("srv", "stdio", "flag", command="x")], [Pending("proj", "needs approval: add it")])
    assert describe(hub.lines()) == (
        "MCP servers:\n  proj (-, project) needs approval: add it\n  srv (stdio, flag) pending"
    )
    assert describe([]).startswith("No MCP servers configured")


def test_a_result_without_structured_content_reaches_the_model_as_its_blocks() -> None:
    from mcp.types import CallToolResult, EmbeddedResource, ImageContent, TextContent, TextResourceContents

    from agentteams.tools.mcp.connection import result_blocks

    resource = TextResourceContents(uri="file:///notes.txt", text="notes")
    plain = CallToolResult(content=[TextContent(type="text", text="15 + 27 = 42"),
                                    ImageContent(type="image", data="iVBO", mime_type="image/png"),
                                    EmbeddedResource(type="resource", resource=resource)])  # fmt: skip
    assert result_blocks(plain) == [
        {"type": "text", "text": "15 + 27 = 42"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
        {"type": "text", "text": "notes"},
    ]
    structured = CallToolResult(content=[TextContent(type="text", text="{}")], structured_content={"result": 42})
    failed = CallToolResult(content=[TextContent(type="text", text="no")], is_error=True)
    assert result_blocks(structured) is None and result_blocks(failed) is None  # the text goes, as claude sends it
