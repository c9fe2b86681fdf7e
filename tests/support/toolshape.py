"""The same scripted tool calls played to the real `claude -p` and to our `agentteams -p`, each against its own
scripted server in its own copy of a scratch project; the tool_result blocks each sent back, and their shape."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc

MARK = "TOOLSHAPE"
ERROR_WRAP = re.compile(r"^<tool_use_error>(.*)</tool_use_error>$", re.S)  # how Claude Code wraps a tool's error


@dataclass(frozen=True)
class Played:
    """One CLI's run: its tool_result blocks in call order, the project it ran in, and every request it made."""

    results: list[dict[str, Any]]
    project: Path
    requests: list[dict[str, Any]]


def result_blocks(server: MockServer) -> list[dict[str, Any]]:
    """Every tool_result the server received, in the order the scripted calls were made (their ids count up)."""
    found: dict[str, dict[str, Any]] = {}
    for req in server.requests:
        body = req.get("body")
        if req["method"] != "POST" or not isinstance(body, dict):
            continue
        for message in body.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found.setdefault(block["tool_use_id"], block)
    return [found[k] for k in sorted(found)]


def text_of(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content if isinstance(c, dict))


def signature(text: str) -> tuple[str, ...]:
    """A result text's structure: a JSON object's keys, the XML-like tags that open lines, or plain text."""
    text = text.strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        return ("json", *sorted(data))
    tags = re.findall(r"^<(\w+)>", text, re.M)
    return ("tags", *tags) if tags else ("text",)


def shape(block: dict[str, Any]) -> tuple[Any, ...]:
    """is_error, the content's form (a string, or the types of its blocks), and the text's signature (an error's
    wrapper taken off: Claude Code wraps input errors in <tool_use_error>, we do not)."""
    content = block.get("content", "")
    form: Any = "str" if isinstance(content, str) else tuple(c.get("type") for c in content)
    text = text_of(block)
    unwrapped = ERROR_WRAP.match(text.strip())
    if block.get("is_error"):
        return (True, form, "error")
    return (False, form, signature(unwrapped.group(1) if unwrapped else text))


def play(
    argv: list[str], turns: list[Any], where: Path, version: str, prepare: Callable[[Path], None],
    flags: tuple[str, ...] = ("--dangerously-skip-permissions",), extra_env: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None, routes: list[dict[str, Any]] | None = None, prelude: int = 0,
) -> Played:  # fmt: skip
    """Run `argv -p` in a fresh project (made by `prepare`, `{P}` in the turns is its path) against a server
    playing `turns`; the results of the first `prelude` turns (a real CLI's ToolSearch) are left out."""
    shutil.rmtree(where, ignore_errors=True)
    project = where / "proj"
    project.mkdir(parents=True)
    prepare(project)
    rc.seed_home(where / "config", [project], version)
    user = where / "config" / "settings.json"
    user.write_text(json.dumps({**json.loads(user.read_text()), **(settings or {})}, indent=2))
    filled = json.loads(json.dumps(turns).replace("{P}", str(project)))
    server = MockServer({"routes": [rc.main_route("main", MARK, filled), *(routes or [])]}).start()
    try:
        env = rc.claude_env(where / "config", server.base_url, extra={"PYTHONIOENCODING": "utf-8", **(extra_env or {})})
        proc = subprocess.run([*argv, *flags, "-p", f"{MARK} go"], env=env, cwd=project, capture_output=True,
                              text=True, timeout=150, check=False)  # fmt: skip
        assert proc.returncode == 0, f"{argv[0]}: exit {proc.returncode}: {proc.stderr[-800:]}"
        posts = [r for r in server.requests if r["method"] == "POST"]
        return Played(result_blocks(server)[prelude:], project, posts)
    finally:
        server.stop()


def load_deferred(version: str, turns: list[Any], tools: str) -> tuple[list[Any], int]:
    """A real CLI's turns: from 2.1.330 on it offers these tools only once ToolSearch has loaded them (`select:`
    names)."""
    if not ccv.TRAITS[version].defers_tools:
        return turns, 0
    search = {"content": [{"type": "tool_use", "name": "ToolSearch", "input": {"query": f"select:{tools}",
                                                                               "max_results": 8}}]}  # fmt: skip
    return [search, *turns], 1


def table(real: Played, ours: Played) -> str:
    lines = []
    for i, (r, o) in enumerate(zip(real.results, ours.results, strict=False)):
        lines.append(f"  call {i}: real {shape(r)} {text_of(r)[:90]!r}\n          ours {shape(o)} {text_of(o)[:90]!r}")
    return "\n".join(lines)
