"""`get_context_usage`: what the session's context holds, by part (system prompt, tools, memory, messages), against
the model's window and the automatic compaction threshold, in the shape Claude Code answers the SDKs with."""

from __future__ import annotations

import json
from typing import Any

from agentteams.agent.compaction import estimate_tokens

GRID_ROWS, GRID_COLUMNS = 10, 20  # the squares the SDKs' /context view draws


def _tokens(text: str) -> int:
    """A token per four characters, as compaction estimates what the API has not measured yet."""
    return (len(text) + 3) // 4 if text else 0


def _tool_tokens(tool: Any) -> int:
    spec = tool.spec()
    return _tokens(json.dumps({"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}))


def context_usage(session: Any) -> dict[str, Any]:
    """The breakdown for `session` now. Its parts are estimated; once an answer measured the context, the messages
    are what the other parts leave of that measure (plus an estimate of what came since, as compaction weighs it)."""
    agent, policy = session.agent, session.compact_policy()
    tools = list(agent.tools.values())
    mcp = [t for t in tools if getattr(t, "server", None) is not None]
    system = _tokens(agent.settings.system)
    builtin = sum(_tool_tokens(t) for t in tools if t not in mcp)
    mcp_tools = [{"name": t.name, "serverName": t.server, "tokens": _tool_tokens(t), "isLoaded": True} for t in mcp]
    memory = [{"path": str(f.path), "type": f.kind, "tokens": _tokens(f.text)} for f in session.memory.files]
    agents = [{"agentType": a.name, "source": a.source, "tokens": _tokens(f"{a.name}: {a.description}")}
              for a in session.agents.agents.values()]  # fmt: skip
    fixed = system + builtin + sum(t["tokens"] for t in mcp_tools) + sum(m["tokens"] for m in memory)
    fixed += sum(a["tokens"] for a in agents)
    messages = estimate_tokens(agent.messages)
    if agent.context_tokens:  # an answer measured it: the messages are what the other parts leave of it
        messages = max(messages, session.compactor.context_tokens() - fixed)
    total = fixed + messages
    window = policy.window
    buffer = window - policy.threshold if policy.auto else 0
    parts = [("system_prompt", "System prompt", system, "promptBorder"), ("system_tools", "System tools", builtin,
             "inactive"), ("mcp_tools", "MCP tools", sum(t["tokens"] for t in mcp_tools), "cyan_FOR_SUBAGENTS_ONLY"),
             ("custom_agents", "Custom agents", sum(a["tokens"] for a in agents), "permission"),
             ("memory_files", "Memory files", sum(m["tokens"] for m in memory), "claude"),
             ("messages", "Messages", messages, "purple_FOR_SUBAGENTS_ONLY")]  # fmt: skip
    categories = [{"id": i, "name": n, "tokens": t, "color": c, "kind": "used"} for i, n, t, c in parts
                  if t or i in ("system_prompt", "system_tools", "messages")]  # fmt: skip
    if buffer:
        categories.append({"id": "autocompact_buffer", "name": "Autocompact buffer", "tokens": buffer,
                           "color": "inactive", "kind": "buffer"})  # fmt: skip
    free = max(0, window - total - buffer)
    categories.append(
        {"id": "free_space", "name": "Free space", "tokens": free, "color": "promptBorder", "kind": "free"}
    )
    last = agent.last_usage
    return {
        "categories": categories, "totalTokens": total, "maxTokens": window, "rawMaxTokens": window,
        "percentage": round(100 * total / window) if window else 0, "gridRows": grid(categories, window),
        "model": session.model, "memoryFiles": memory, "mcpTools": mcp_tools, "agents": agents,
        "autoCompactThreshold": policy.threshold, "isAutoCompactEnabled": policy.auto,
        "apiUsage": None if last is None else last.to_json(),
    }  # fmt: skip


def grid(categories: list[dict[str, Any]], window: int) -> list[list[dict[str, Any]]]:
    """The window as rows of squares, filled by each category in turn (a part takes at least one square); the
    squares left over are free space."""
    squares, per = GRID_ROWS * GRID_COLUMNS, max(1, window / (GRID_ROWS * GRID_COLUMNS))
    cells: list[dict[str, Any]] = []
    free = next((c for c in categories if c["kind"] == "free"), None)
    for c in (c for c in categories if c["kind"] != "free" and c["tokens"] > 0):
        share = c["tokens"] / per
        whole = max(1, round(share))
        for k in range(whole):
            fullness = min(1.0, share - k) if k == whole - 1 else 1.0
            cells.append({"color": c["color"], "isFilled": True, "categoryName": c["name"], "tokens": c["tokens"],
                          "percentage": round(100 * c["tokens"] / window) if window else 0,
                          "squareFullness": round(max(fullness, 0.0), 4)})  # fmt: skip
    cells = cells[:squares]
    empty = {"color": free["color"] if free else "promptBorder", "isFilled": False, "categoryName": "Free space",
             "tokens": free["tokens"] if free else 0, "percentage": 0, "squareFullness": 0}  # fmt: skip
    cells += [dict(empty) for _ in range(squares - len(cells))]
    return [cells[r * GRID_COLUMNS : (r + 1) * GRID_COLUMNS] for r in range(GRID_ROWS)]
