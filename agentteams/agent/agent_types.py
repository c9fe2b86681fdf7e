"""Which agent type an agent runs as: a teammate's own type, the model a type runs on, a subagent's tool limit."""

from __future__ import annotations

from agentteams import diagnostics
from agentteams.agent.prompts import Identity
from agentteams.model.aliases import UnknownModelError, known_model
from agentteams.settings.agents import BUILT_IN, AgentCatalog, AgentDef, built_in_type
from agentteams.store.paths import LEAD_NAME
from agentteams.tools.subagent import SUBAGENT_TOOLS


def own_type(agents: AgentCatalog, me: Identity | None) -> AgentDef | None:
    """The agent type a teammate was started as (`--agent-type`): a custom one read from its own cwd's files, or a
    built-in one with a tool list; an unknown one is said once and the teammate runs as a general-purpose one."""
    if me is None or not me.agent_type or me.agent_type == LEAD_NAME:
        return None
    if me.agent_type in BUILT_IN:
        return built_in_type(me.agent_type)
    agent = agents.get(me.agent_type)
    if agent is None:
        diagnostics.warning("agent type %r is not defined in .claude/agents here or in the config root's agents/: "
                            "%s runs as a general-purpose teammate", me.agent_type, me.name)  # fmt: skip
    return agent


def agent_model(agent: AgentDef | None, caller: str) -> str:
    """The model an agent of this type runs on, started by one running on `caller`; a model name we cannot
    resolve is said once and the caller's is used."""
    if agent is None or agent.model_for(caller) == caller:
        return caller  # the caller's model, whatever name it was given by
    try:
        return known_model(agent.model_for(caller))
    except UnknownModelError as e:
        diagnostics.warning("agent type %r (%s): %s; it runs on %s", agent.name, agent.path, e, caller)
        return caller


def subagent_restriction(kind: str, custom: AgentDef | None) -> str | None:
    if custom is not None:
        return custom.restriction()
    allowed = SUBAGENT_TOOLS.get(kind)
    return None if allowed is None else f"the {kind} subagent type may use only {', '.join(allowed)}"
