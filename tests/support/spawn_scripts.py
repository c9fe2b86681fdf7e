"""Mock scripts for spawn caps and forks, the same for our CLI and the real claude: a chain of nested subagents
(LEVEL1 → LEVEL2 → ...) and a fork of the main agent; and what to read back from the requests (the refusals the
model was given, whether a request offered the tool that spawns, a fork's first request and its usage)."""

from __future__ import annotations

import json
import re
from typing import Any

from agentteams.mockapi.app import Record

MAIN = "MAINPROMPT spawn"
SPAWNING_TOOLS = frozenset({"Agent", "Task"})  # claude's name and ours


def agent_call(prompt: str, kind: str = "general-purpose") -> dict[str, Any]:
    return {"type": "tool_use", "name": "Agent",
            "input": {"description": "nested job", "prompt": prompt, "subagent_type": kind}}  # fmt: skip


def chain_script(levels: int = 5) -> dict[str, Any]:
    """The main agent starts LEVEL1, which starts LEVEL2, and so on: each level answers `L<n> done` once its call
    comes back (refused or not)."""
    routes = [{"name": f"l{i}", "match": {"tools": True, "first_user": f"LEVEL{i} "},
               "turns": [{"content": [agent_call(f"LEVEL{i + 1} go deeper")]}], "idle": f"L{i} done"}
              for i in range(levels, 0, -1)]  # fmt: skip
    routes.append({"name": "main", "match": {"tools": True, "first_user": "MAINPROMPT"},
                   "turns": [{"content": [agent_call("LEVEL1 go deeper")]}], "idle": "MAIN DONE"})  # fmt: skip
    return {"routes": routes}


def fork_script(child_call: dict[str, Any] | None = None) -> dict[str, Any]:
    """The main agent forks itself with the directive `FORKJOB ...`; the fork's first request (its newest user
    message holds the directive) makes `child_call` if given. A nested subagent's prompt starts with NESTED."""
    fork_turns = [{"content": [child_call]}] if child_call is not None else []
    return {"routes": [
        {"name": "fork", "match": {"tools": True, "last_user": "FORKJOB"}, "turns": fork_turns, "idle": "fork done"},
        {"name": "nested", "match": {"tools": True, "first_user": "NESTED"}, "turns": [], "idle": "nested done"},
        {"name": "main", "match": {"tools": True, "first_user": "MAINPROMPT"}, "turns": [
            {"content": [{"type": "text", "text": "Forking."}, agent_call("FORKJOB summarize the plan", "fork")]}],
         "idle": "MAIN DONE"},
    ]}  # fmt: skip


def sequential_script(count: int) -> dict[str, Any]:
    """The main agent starts WORKER0, then (its call answered) WORKER1, and so on: one subagent after another."""
    calls = [{"content": [agent_call(f"WORKER{i} do it")]} for i in range(count)]
    return {"routes": [
        {"name": "worker", "match": {"tools": True, "first_user": "WORKER"}, "turns": [], "idle": "worker done"},
        {"name": "main", "match": {"tools": True, "first_user": "MAINPROMPT"}, "turns": calls, "idle": "MAIN DONE"},
    ]}  # fmt: skip


def side_by_side_script(count: int, background: bool | None = None, hold_ms: int = 2500) -> dict[str, Any]:
    """The main agent's one answer makes `count` Agent calls (ids `toolu_side_<i>`, prompts `WORKER<i>`), with
    `run_in_background` as given (claude's foreground: False); each worker answers after `hold_ms`, so the calls
    started side by side are all still running when the last one starts."""
    calls = []
    for i in range(count):
        call = agent_call(f"WORKER{i} do it")
        call["id"] = f"toolu_side_{i}"
        if background is not None:
            call["input"]["run_in_background"] = background
        calls.append(call)
    held = {"delay_ms": hold_ms, "text": "worker done"}
    return {"routes": [
        {"name": "worker", "match": {"tools": True, "first_user": "WORKER"}, "turns": [], "idle": held},
        {"name": "main", "match": {"tools": True, "first_user": "MAINPROMPT"},
         "turns": [{"content": [{"type": "text", "text": "Spawning."}, *calls]}], "idle": "MAIN DONE"},
    ]}  # fmt: skip


def refused_calls(records: list[Record], route: str | None = None) -> dict[str, str]:
    """tool_use_id -> text of every error tool_result sent on `route`'s requests."""
    seen: dict[str, str] = {}
    for r in messages_requests(records, route):
        for m in r["body"]["messages"]:
            for b in m["content"] if isinstance(m.get("content"), list) else []:
                if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("is_error"):
                    seen.setdefault(str(b.get("tool_use_id")), _text(b.get("content")))
    return seen


def messages_requests(records: list[Record], route: str | None = None) -> list[Record]:
    return [r for r in records if isinstance(r.get("body"), dict) and "messages" in r["body"]
            and (route is None or r.get("route") == route)]  # fmt: skip


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content if isinstance(c, dict)) if isinstance(content, list) else ""


def error_results(records: list[Record], route: str | None = None) -> list[str]:
    """The text of every error tool_result sent on `route`'s requests, anywhere in their messages, each once."""
    return list(refused_calls(records, route).values())


def tool_result_texts(records: list[Record], route: str | None = None) -> list[str]:
    """The text of every tool_result sent on `route`'s requests (errors too), each once."""
    seen: dict[str, str] = {}
    for r in messages_requests(records, route):
        for m in r["body"]["messages"]:
            for b in m["content"] if isinstance(m.get("content"), list) else []:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    seen.setdefault(str(b.get("tool_use_id")), _text(b.get("content")))
    return list(seen.values())


def workers_started(records: list[Record]) -> list[str]:
    """The WORKER<i> prompts the worker route's requests carried (a real claude puts reminders before them)."""
    found = (re.search(r"WORKER\d+", _text(r["body"]["messages"][0]["content"])) for r in messages_requests(
        records, "worker"))  # fmt: skip
    return sorted(m.group() for m in found if m is not None)


def may_spawn(record: Record) -> bool:
    """Does this request offer the model the tool that starts subagents?"""
    return bool(SPAWNING_TOOLS & {t.get("name") for t in record["body"].get("tools") or []})


def usage(record: Record) -> dict[str, int]:
    answer = record.get("response")
    found = answer.get("usage") if isinstance(answer, dict) else None
    return dict(found) if isinstance(found, dict) else {}


def dumped(records: list[Record]) -> str:
    """The routes and turns the server saw, for an assertion's message."""
    return json.dumps([(r.get("route"), r.get("turn")) for r in messages_requests(records)])
