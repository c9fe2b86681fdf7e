"""What each CLI has built in, left out of an SDK example's printed lines before they are compared (sdk_examples.py):
claude 2.1.332's built-in commands, skills, agents, output styles, plugins and tools are not ours, and ours are not
its. The project's own entries (its files', its plugin's, the program's) stay, so they must be equal."""

from __future__ import annotations

import ast
import re

# claude 2.1.332's built-in slash commands and skills (its initialize answer marks each `builtin`), by name only
CLAUDE_COMMANDS = frozenset(
    {
        "deep-research",
        "dataviz",
        "update-config",
        "verify",
        "debug",
        "code-review",
        "simplify",
        "batch",
        "fewer-permission-prompts",
        "doctor",
        "loop",
        "claude-api",
        "workflow-authoring",
        "run",
        "run-skill-generator",
        "plugin-authoring",
        "agents",
        "auto-mode-setup",
        "autocompact",
        "clear",
        "color",
        "compact",
        "config",
        "output-style",
        "context",
        "effort",
        "fast",
        "focus",
        "heapdump",
        "init",
        "mcp",
        "model",
        "__remote-workflow",
        "workflow-launch-exec",
        "reload-plugins",
        "reload-skills",
        "rename",
        "security-review",
        "usage",
        "insights",
        "recap",
        "goal",
        "list-agents",
        "team-onboarding",
    }
)
OUR_COMMANDS = frozenset({"compact"})  # agentteams/run/init_info.py BUILTIN_COMMANDS
# built-in agent types: claude's own two beside the three both have
AGENTS = frozenset({"claude", "statusline-setup", "general-purpose", "Explore", "Plan"})
STYLES = frozenset({"Proactive", "Concise", "Explanatory", "Learning"})  # claude's; ours is only `default`
BUILTINS = CLAUDE_COMMANDS | OUR_COMMANDS | AGENTS

_LISTED = re.compile(r"^(Available slash commands|Init message received\. Agents loaded): (\[.*\])$")
# tools={'type': 'preset', ...}: the count and first five of each CLI's own tool set
_PRESET = re.compile(r"^Tools from system message \(\d+ tools\): \[.*\]\.\.\.$")


def without_builtins(line: str) -> str | None:
    """The line with each CLI's built-in entries left out (None: the whole line is one, as a built-in plugin's)."""
    found = _LISTED.match(line)
    if found:
        names = [n for n in ast.literal_eval(found.group(2)) if n not in BUILTINS]
        return f"{found.group(1)}: {names}"
    if _PRESET.match(line):
        return "Tools from system message (<n> tools): <each CLI's own>..."
    if line.endswith("(path: builtin)"):  # claude's built-in plugins
        return None
    if line.startswith("  - Available commands: "):  # the count holds each CLI's built-ins
        return "  - Available commands: <n>"
    if line.startswith("  - Available output styles: "):
        styles = [s for s in line.split(": ", 1)[1].split(", ") if s not in STYLES]
        return f"  - Available output styles: {', '.join(styles)}"
    if line.startswith("    • ") and line[len("    • ") :] in BUILTINS:  # get_server_info's first five commands
        return None
    return line
