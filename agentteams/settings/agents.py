"""Custom agents (Claude Code's subagent files): `.claude/agents/**/*.md` of the project and the config root's
`agents/`, read into `AgentDef`s; `load_agents` (project over user on a name clash) and `describe_agents`."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentteams.errors import AgentTeamsError

AgentSource = Literal["built-in", "project", "user", "program"]  # program: `--agents` JSON, an SDK's initialize
# the built-in subagent types and their tools (None: every tool but Task itself)
BUILT_IN_TOOLS: dict[str, tuple[str, ...] | None] = {
    "general-purpose": None,
    "Explore": ("Read", "Glob", "Grep", "Bash"),
    "Plan": ("Read", "Glob", "Grep", "Bash", "TaskList", "TaskGet"),
}
BUILT_IN = tuple(BUILT_IN_TOOLS)
ALIASES = {"Agent": "Task"}  # Claude Code renamed Task to Agent; a tool list may name either
# what a teammate keeps whatever its type's `tools` say: without these it could not take part in its team
TEAMMATE_TOOLS = ("SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate")
INHERIT = "inherit"


@dataclass(frozen=True)
class AgentDef:
    """One agent type: a custom file's, or a built-in type's list. `tools` None = every tool (the key absent, or `*`);
    `model` None = the caller's."""

    name: str
    description: str
    prompt: str
    source: AgentSource
    path: Path | None = None
    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()
    model: str | None = None
    color: str | None = None
    max_turns: int | None = None

    def allows(self, tool: str) -> bool:
        """May an agent of this type use `tool` (by its name)?"""
        if tool in self.disallowed_tools:
            return False
        return self.tools is None or tool in self.tools

    def model_for(self, caller: str) -> str:
        """The model an agent of this type runs on when started by an agent running on `caller`."""
        return caller if self.model in (None, INHERIT) else str(self.model)

    def restriction(self) -> str:
        """In words, for a refused call: which file limits the tools and to what."""
        where = f" ({self.path})" if self.path else ""
        return f"agent type {self.name!r}{where} may use {_tools(self.tools, self.disallowed_tools)}"


@dataclass(frozen=True)
class AgentCatalog:
    """The custom agent types one cwd sees, by name, and one line per file that could not be used."""

    agents: dict[str, AgentDef] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def get(self, name: str | None) -> AgentDef | None:
        return self.agents.get(name) if name else None

    def names(self) -> list[str]:
        """Every subagent type, the built-in ones first."""
        return [*BUILT_IN, *sorted(n for n in self.agents if n not in BUILT_IN)]


def built_in_type(name: str) -> AgentDef | None:
    """A built-in type with a tool list (Explore, Plan) as a definition without a prompt of its own, so a teammate
    of that type is held to its list as a subagent is (Claude Code drops it there: a bug its maintainers confirmed,
    anthropics/claude-code#81852); None for general-purpose and unknown names."""
    tools = BUILT_IN_TOOLS.get(name)
    return None if tools is None else AgentDef(name, f"the built-in {name} type", "", "built-in", tools=tools)


def tool_names(value: Any, key: str) -> tuple[str, ...] | None:
    """A `tools` / `disallowedTools` value: a comma-separated string or a YAML list. `Bash(git:*)` counts as Bash
    (the rule's pattern limits a permission, not the list); `*` means every tool (None)."""
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        items = list(value)
    else:
        raise ValueError(f"{key} must be a comma-separated string or a list of tool names")
    names: list[str] = []
    for item in items:
        name = item.strip().split("(", 1)[0].strip()
        if name == "*":
            return None
        if name and ALIASES.get(name, name) not in names:
            names.append(ALIASES.get(name, name))
    return tuple(names)


def parse_agent(path: Path, source: AgentSource) -> AgentDef:
    """One agent file. Raises OSError, FrontMatterError or ValueError (a missing name or description, a wrong
    type): the caller reports it in one line and goes on without the file."""
    from agentteams.settings.frontmatter import read_markdown  # only when there is a file: off the bare start-up

    doc = read_markdown(path)
    name, description = doc.text("name"), doc.text("description")
    if not name or not description:
        raise ValueError(f"the front matter needs a {'name' if not name else 'description'}")
    tools = tool_names(doc.meta["tools"], "tools") if doc.meta.get("tools") is not None else None
    denied = doc.meta.get("disallowedTools")
    max_turns = doc.meta.get("maxTurns")
    if max_turns is not None and (not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1):
        raise ValueError("maxTurns must be a positive whole number")
    return AgentDef(
        name=name.strip(), description=" ".join(description.split()), prompt=doc.body.strip(), source=source,
        path=path, tools=tools, disallowed_tools=tool_names(denied, "disallowedTools") or () if denied else (),
        model=doc.text("model"), color=doc.text("color"), max_turns=max_turns,
    )  # fmt: skip


def program_agents(defined: object) -> tuple[list[AgentDef], list[str]]:
    """Agent types given as JSON (`--agents`, an Agent SDK's `initialize`): `{name: {description, prompt, tools?,
    disallowedTools?, model?, maxTurns?}}`; one line per entry that is not one (skipped)."""
    found: list[AgentDef] = []
    problems: list[str] = []
    for name, spec in defined.items() if isinstance(defined, dict) else ():
        description, prompt = (spec.get(k) if isinstance(spec, dict) else None for k in ("description", "prompt"))
        if not isinstance(description, str) or not isinstance(prompt, str) or not str(name).strip():
            problems.append(f"agent {name!r}: needs a description and a prompt (strings); skipped")
            continue
        assert isinstance(spec, dict)
        try:
            tools = tool_names(spec["tools"], "tools") if spec.get("tools") is not None else None
            denied = tool_names(spec.get("disallowedTools") or [], "disallowedTools") or ()
        except ValueError as e:
            problems.append(f"agent {name!r}: {e}; skipped")
            continue
        turns, model = spec.get("maxTurns"), spec.get("model")
        found.append(AgentDef(
            name=str(name).strip(), description=" ".join(description.split()), prompt=prompt.strip(), source="program",
            tools=tools, disallowed_tools=denied, model=model if isinstance(model, str) else None,
            max_turns=turns if isinstance(turns, int) and not isinstance(turns, bool) and turns > 0 else None,
        ))  # fmt: skip
    return found, problems


def project_agent_dirs(cwd: Path) -> list[Path]:
    """`.claude/agents` of `cwd` and of each parent up to the repository root (the nearest `.git`), nearest
    first; outside a repository only the cwd's own."""
    here = Path(os.path.abspath(cwd))
    chain = [here, *here.parents]
    top = next((i for i, d in enumerate(chain) if (d / ".git").exists()), 0)
    return [d / ".claude" / "agents" for d in chain[: top + 1]]


def _files(folder: Path) -> Iterator[Path]:
    """The `.md` files under `folder`, subfolders included (Claude Code scans them too), in a stable order."""
    if not folder.is_dir():  # most folders: none there, and rglob's set-up is not free (~1 ms a teammate start)
        return
    try:
        found = sorted(p for p in folder.rglob("*.md") if p.is_file())
    except OSError:
        return
    yield from found


def load_agents(cwd: Path, root: Path, scopes: Collection[str] = ("user", "project")) -> AgentCatalog:
    """Every custom agent `cwd` sees from the `scopes` read (as `--setting-sources` names them): its project's
    (nearest directory first), then the user's under `root`. The first definition of a name wins; a file that
    cannot be used is one problem line and is skipped."""
    agents: dict[str, AgentDef] = {}
    problems: list[str] = []
    user_dir = root / "agents"
    places: list[tuple[Path, AgentSource]] = [(d, "project") for d in project_agent_dirs(cwd) if "project" in scopes]
    if "user" in scopes:
        places.append((user_dir, "user"))
    seen: set[Path] = set()
    for folder, source in places:
        if folder.resolve() in seen or (source == "project" and folder.resolve() == user_dir.resolve()):
            continue  # the home directory's .claude/agents is the user scope, not a project's
        seen.add(folder.resolve())
        for path in _files(folder):
            try:
                agent = parse_agent(path, source)
            except (OSError, UnicodeDecodeError, AgentTeamsError, ValueError) as e:  # AgentTeamsError: FrontMatterError
                text = str(e) if isinstance(e, AgentTeamsError) else f"{path}: {getattr(e, 'strerror', None) or e}"
                problems.append(f"custom agent {text}; the file is skipped")
                continue
            if agent.name in BUILT_IN:
                problems.append(f"custom agent {path}: {agent.name!r} is a built-in agent type; the file is skipped")
            elif agent.name not in agents:
                agents[agent.name] = agent
    return AgentCatalog(agents, tuple(problems))


def describe_agents(catalog: AgentCatalog) -> list[str]:
    """One line per agent type, for `/agents`: name, where it is defined, its tools and its model."""
    lines = [f"{name} · built-in · tools: {_tools(BUILT_IN_TOOLS[name], ())} · model: {INHERIT}" for name in BUILT_IN]
    for name in catalog.names()[len(BUILT_IN) :]:
        agent = catalog.agents[name]
        tools = _tools(agent.tools, agent.disallowed_tools)
        lines.append(f"{name} · {agent.source} ({agent.path}) · tools: {tools} · model: {agent.model or INHERIT}")
    return lines


def _tools(allowed: tuple[str, ...] | None, denied: tuple[str, ...]) -> str:
    text = "all tools" if allowed is None else (", ".join(allowed) or "no tools")
    return text + (f" except {', '.join(denied)}" if denied else "")
