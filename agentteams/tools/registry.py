"""The full tool set, and the subset each kind of subagent may use."""

from __future__ import annotations

from agentteams.tools.base import Tool
from agentteams.tools.files import EditTool, ReadTool, WriteTool
from agentteams.tools.plan_tools import PLAN_TOOLS
from agentteams.tools.search import GlobTool, GrepTool
from agentteams.tools.shell import BashTool
from agentteams.tools.subagent import SUBAGENT_TOOLS, TaskTool
from agentteams.tools.tasks_tools import TASK_TOOLS
from agentteams.tools.team_tools import TEAM_TOOLS


def all_tools() -> list[Tool]:
    """Every tool, in the order the model is shown them."""
    tools: list[Tool] = [BashTool(), ReadTool(), WriteTool(), EditTool(), GlobTool(), GrepTool()]
    tools += [cls() for cls in (*TASK_TOOLS, *TEAM_TOOLS)]
    tools += [TaskTool(), *(cls() for cls in PLAN_TOOLS)]
    return tools


def subagent_tools(kind: str, parent: list[Tool]) -> list[Tool]:
    """What a subagent of `kind` may use, out of what its parent was offered (never Task itself)."""
    allowed = SUBAGENT_TOOLS.get(kind)
    return [t for t in parent if t.name != TaskTool.name and (allowed is None or t.name in allowed)]
