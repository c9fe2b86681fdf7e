"""Mock-server routes that answer a prompt statelessly: text, or tool calls step by step (each step chosen by the id
of the previous step's call already in the conversation), so one server serves many sessions and repeated prompts."""

from __future__ import annotations

from typing import Any

Route = dict[str, Any]
Call = tuple[str, dict[str, Any]]  # (tool name, input)


def text(name: str, prompt: str, answer: str | dict[str, Any], **match: Any) -> Route:
    """Whatever request has `prompt` as its newest prompt gets `answer` (a text, or a turn object)."""
    return {"name": name, "match": {"last_prompt": prompt, **match}, "turns": [], "idle": answer}


def steps(name: str, prompt: str, calls: list[list[Call]], final: str | dict[str, Any], **match: Any) -> list[Route]:
    """The model's answer to `prompt`: each list of calls in `calls` in turn (one assistant message each, calls in
    parallel within it), then `final`. Routes are tried in order, so the later steps come first."""
    ids = [[f"toolu_{name}_{i}_{j}" for j in range(len(step))] for i, step in enumerate(calls)]
    routes: list[Route] = []
    if calls:
        routes.append(text(f"{name}-final", prompt, final, any=ids[-1][0], **match))
    for i in reversed(range(len(calls))):
        blocks = [{"type": "tool_use", "id": ids[i][j], "name": tool, "input": args}
                  for j, (tool, args) in enumerate(calls[i])]  # fmt: skip
        where = {"any": ids[i - 1][0]} if i else {}
        routes.append(text(f"{name}-{i}", prompt, {"content": blocks}, tools=True, **where, **match))
    if not calls:
        routes.append(text(name, prompt, final, **match))
    return routes


def bash(command: str) -> Call:
    return ("Bash", {"command": command, "description": "Run the command"})


def slow(answer: str, seconds: float) -> dict[str, Any]:
    """A text turn streamed over about `seconds` (five characters a delta)."""
    pieces = max(1, len(answer) // 5)
    return {"text": answer, "chunk": 5, "delta_delay_ms": int(seconds * 1000 / pieces)}


def script(routes: list[Route]) -> dict[str, Any]:
    names = [r["name"] for r in routes]
    assert len(names) == len(set(names)), f"duplicate route names: {names}"
    return {"routes": routes, "fallback": "OK."}
