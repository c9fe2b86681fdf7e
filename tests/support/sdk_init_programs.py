"""SDK programs that read what a CLI says of its session (the `init` message and `get_server_info`): the project's
agent and command files, a plugin's command, the program's agent types, the settings' output style."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions, ClaudeSDKClient, SystemMessage

from tests.support.sdk_programs import Where

PLUGIN = "demo-kit"


def project(where: Path) -> Path:
    """A project with an agent file, a command file, local settings naming an output style, and a plugin (beside it,
    outside the project); the plugin's directory."""
    claude = where / ".claude"
    (claude / "agents").mkdir(parents=True)
    (claude / "commands").mkdir()
    (claude / "agents" / "fs-agent.md").write_text("---\nname: fs-agent\ndescription: From a file\n---\nHi.\n")
    (claude / "commands" / "commit.md").write_text("---\ndescription: Commit it\nargument-hint: [msg]\n---\nGo.\n")
    (claude / "settings.local.json").write_text(json.dumps({"outputStyle": "local-style"}))
    plugin = where.parent / f"{where.name}-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": PLUGIN, "version": "2.0.1"}))
    (plugin / "commands").mkdir()
    (plugin / "commands" / "greet.md").write_text("# Greet them\n\nSay hello.\n")
    return plugin


async def what_the_session_says(where: Where, sources: list[str] | None) -> dict[str, Any]:
    """The first init message's agents, commands, output style and plugins, and get_server_info's own commands."""
    plugin = project(where.cwd)
    extra: dict[str, Any] = {} if sources is None else {"setting_sources": sources}
    options = ClaudeAgentOptions(
        cli_path=str(where.cli), cwd=str(where.cwd), env=where.env, max_turns=1,
        agents={"prog-agent": AgentDefinition(description="From the program", prompt="Hi.", model="sonnet")},
        plugins=[{"type": "local", "path": str(plugin)}], **extra,
    )  # fmt: skip
    seen: dict[str, Any] = {}
    async with ClaudeSDKClient(options=options) as client:
        info = await client.get_server_info() or {}
        seen["info_commands"] = [c for c in info.get("commands", []) if not c.get("builtin")]
        seen["info_agents"] = [a for a in info.get("agents", []) if a["name"] in ("prog-agent", "fs-agent")]
        seen["info_style"] = info.get("output_style")
        await client.query("hi")
        async for m in client.receive_response():
            if isinstance(m, SystemMessage) and m.subtype == "init" and "agents" not in seen:
                seen.update({k: m.data.get(k) for k in ("agents", "slash_commands", "output_style", "plugins")})
                seen["plugins"] = [{k: v for k, v in p.items() if k != "path"} for p in seen["plugins"] or []]
                seen["keys"] = list(m.data)
    return seen
