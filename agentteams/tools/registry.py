"""The full tool set, and the subset each kind of subagent (built-in or custom) may use."""

from __future__ import annotations

from agentteams.settings.agents import AgentCatalog, AgentDef
from agentteams.tools.base import Tool
from agentteams.tools.files.notebook_edit import NotebookEditTool
from agentteams.tools.files.read_write_edit import EditTool, ReadTool, WriteTool
from agentteams.tools.files.search import GlobTool, GrepTool
from agentteams.tools.plan import PLAN_TOOLS
from agentteams.tools.shell.background_tools import BACKGROUND_TOOLS
from agentteams.tools.shell.bash import BashTool
from agentteams.tools.subagent import SUBAGENT_TOOLS, TaskTool
from agentteams.tools.team.merge import TeamMergeTool
from agentteams.tools.team.peer_tools import ListAgentsTool
from agentteams.tools.team.task_tools import TASK_TOOLS
from agentteams.tools.team.team_tools import TEAM_TOOLS
from agentteams.tools.todo_write import TodoWriteTool
from agentteams.tools.web.fetch import WebFetchTool
from agentteams.tools.web.search import WebSearchTool


def all_tools(agents: AgentCatalog | None = None, only: tuple[str, ...] | None = None) -> list[Tool]:
    """Every tool, in the order the model is shown them (`only`: those named, as `--tools` asks; `Agent` is `Task`);
    `Task` offers the custom agent types of `agents`."""
    if only is not None:
        wanted = {"Task" if name == "Agent" else name for name in only}
        return [t for t in all_tools(agents) if t.name in wanted]
    tools: list[Tool] = [BashTool(), ReadTool(), WriteTool(), EditTool(), GlobTool(), GrepTool()]
    # the rest of Claude Code's tool set, after the first six: a stable order keeps the prompt cache
    tools += [
        *(cls() for cls in BACKGROUND_TOOLS),
        TodoWriteTool(),
        NotebookEditTool(),
        WebFetchTool(),
        WebSearchTool(),
    ]
    tools += [cls() for cls in (*TASK_TOOLS, *TEAM_TOOLS)]
    tools += [TaskTool(agents), *(cls() for cls in PLAN_TOOLS)]
    return [*tools, TeamMergeTool(), ListAgentsTool()]  # last: the tools before them keep the places they always had


def subagent_tools(kind: str, parent: list[Tool], agent: AgentDef | None = None, *, nest: bool = False) -> list[Tool]:
    """What a subagent of `kind` may use, out of what its parent was offered (never the lead's StructuredOutput, and
    Task only when it may `nest`: below the spawn depth cap): a custom type's `tools` and `disallowedTools`, or a
    built-in type's list."""
    allowed = SUBAGENT_TOOLS.get(kind)
    fits = agent.allows if agent is not None else (lambda name: allowed is None or name in allowed)
    return [t for t in parent if t.name != "StructuredOutput" and (nest or t.name != TaskTool.name) and fits(t.name)]


def agent_tools(agent: AgentDef, tools: list[Tool], keep: tuple[str, ...] = ()) -> list[Tool]:
    """The tools of an agent running as a custom type: its list, plus `keep` (a teammate's coordination tools,
    which it cannot do its part in the team without)."""
    return [t for t in tools if agent.allows(t.name) or t.name in keep]
