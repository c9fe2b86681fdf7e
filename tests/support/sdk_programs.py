"""Programs written with the real Python Agent SDK (`claude-agent-sdk`), each run against a CLI (`cli_path`: ours or
the real `claude`) and a scripted Messages API server, each reduced to what its author can observe: the messages it
got, what its callbacks were asked, the files the agent left, what reached the model. The SDK tests compare these
outcomes between the two CLIs, and check ours alone where the real one is not needed."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import anyio
from claude_agent_sdk import (
    AgentDefinition,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ResultMessage,
    create_sdk_mcp_server,
    query,
    tool,
)
from claude_agent_sdk.types import PermissionRuleValue

from agentteams.mockapi import MockServer

DEADLINE = 90.0  # seconds a program may run against either CLI
S = TypeVar("S")  # what a program reports: a Seen, or a program's own record


@dataclass
class Where:
    """One CLI to drive: its path, the environment and working directory it runs with, the scripted server."""

    cli: Path
    env: dict[str, str]
    cwd: Path
    server: MockServer


@dataclass
class Seen:
    """What one program observed."""

    kinds: list[str] = field(default_factory=list)  # message classes in order (SystemMessage init only once)
    results: list[dict[str, Any]] = field(default_factory=list)
    asked: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # can_use_tool (tool, input)
    hooks: list[tuple[str, str]] = field(default_factory=list)  # (event, tool or "")
    files: list[str] = field(default_factory=list)
    tool_results: list[str] = field(default_factory=list)  # what the model was told of each tool call
    raised: str = ""  # the SDK's exception at the end (after an error result it raises one)
    models: list[str] = field(default_factory=list)  # the model each main-conversation request asked for
    saved: list[str] = field(default_factory=list)  # permissions.allow of the project's .claude/settings.local.json
    agents: list[str] = field(default_factory=list)  # the program's agent types the CLI says it has
    offered: list[str] = field(default_factory=list)  # the tools the first init line lists
    streamed: str = ""  # the text deltas of `stream_event` messages, joined
    stream_types: set[str] = field(default_factory=set)  # the raw event types they carried
    order: list[str] = field(default_factory=list)  # raw event types and "assistant" lines, in order, repeats joined
    attributed: list[str] = field(default_factory=list)  # messages attributed to a Task call: kind and block types
    rewound: list[Any] = field(default_factory=list)  # rewind_files answers (paths made relative), then the files


def bash_turn(command: str, use_id: str = "toolu_sdk_1") -> dict[str, Any]:
    call = {"type": "tool_use", "id": use_id, "name": "Bash", "input": {"command": command, "description": "run"}}
    return {"content": [call]}


def script(*turns: Any) -> dict[str, Any]:
    """The main conversation's turns; the real CLI's side requests (titles, summaries) answered by a second route."""
    side = {"content": [{"type": "text", "text": "side"}], "repeat": 50}
    return {"routes": [{"name": "main", "match": {"tools": True}, "turns": list(turns)},
                       {"name": "side", "turns": [side]}]}  # fmt: skip


def _result(m: ResultMessage) -> dict[str, Any]:
    out = {"subtype": m.subtype, "is_error": m.is_error, "result": m.result, "num_turns": m.num_turns,
           "api_ms_is_int": isinstance(m.duration_api_ms, int)}  # fmt: skip
    if m.is_error:  # what a program branches on: the error lines, the API's status (the wording is each CLI's own)
        out.update(result=None, errors=m.errors, api_error_status=m.api_error_status)
    return out


async def _collect(messages: Any, seen: Seen) -> None:
    try:
        await _read(messages, seen)
    except Exception as e:
        seen.raised = type(e).__name__


async def _read(messages: Any, seen: Seen) -> None:
    async for m in messages:
        kind = type(m).__name__
        if kind == "StreamEvent":  # interleaved with the assistant lines differently by each CLI: not in `kinds`
            seen.stream_types.add(m.event.get("type"))
            _in_order(seen, str(m.event.get("type")))
            delta = m.event.get("delta") or {}
            seen.streamed += delta.get("text", "") if delta.get("type") == "text_delta" else ""
            continue
        if getattr(m, "parent_tool_use_id", None):  # a subagent's, attributed to its Task call
            blocks = m.content if isinstance(m.content, list) else []
            seen.attributed.append(":".join([kind, *(type(b).__name__ for b in blocks)]))
            continue
        if kind == "SystemMessage" and getattr(m, "subtype", "") != "init":
            continue  # state changes and the like: the real CLI sends more of them
        if kind == "SystemMessage" and not seen.offered:
            seen.offered = list(m.data.get("tools") or [])
        if kind == "AssistantMessage":
            _in_order(seen, "assistant")
        if not seen.kinds or seen.kinds[-1] != kind or kind != "SystemMessage":
            seen.kinds.append(kind)
        if isinstance(m, ResultMessage):
            seen.results.append(_result(m))


def _in_order(seen: Seen, what: str) -> None:
    if not seen.order or seen.order[-1] != what:
        seen.order.append(what)


def _finish(where: Where, seen: Seen) -> Seen:
    seen.files = sorted(p.name for p in where.cwd.iterdir() if not p.name.startswith("."))
    local = where.cwd / ".claude" / "settings.local.json"
    if local.is_file():
        seen.saved = json.loads(local.read_text()).get("permissions", {}).get("allow", [])
    for record in where.server.requests:
        if record.get("route") != "main":
            continue
        seen.models.append(str(record["body"].get("model")))
        for message in record["body"].get("messages") or []:
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    text = block.get("content")
                    text = text if isinstance(text, str) else json.dumps(text)
                    if text not in seen.tool_results:
                        seen.tool_results.append(text)
    return seen


def _options(where: Where, **more: Any) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(cli_path=str(where.cli), cwd=str(where.cwd), env=where.env, **more)


async def _one(prompt: str) -> Any:
    yield {"type": "user", "message": {"role": "user", "content": prompt}}


# -- the programs ----------------------------------------------------------------------------------------------


async def one_shot(where: Where) -> Seen:
    seen = Seen()
    await _collect(query(prompt="hi", options=_options(where)), seen)
    return _finish(where, seen)


async def can_use_tool_allows_with_new_input(where: Where) -> Seen:
    seen = Seen()

    async def decide(tool: str, given: dict[str, Any], _context: Any) -> Any:
        seen.asked.append((tool, given))
        return PermissionResultAllow(updated_input={**given, "command": "touch changed.txt"})

    await _collect(query(prompt=_one("go"), options=_options(where, can_use_tool=decide)), seen)
    return _finish(where, seen)


async def can_use_tool_denies(where: Where) -> Seen:
    seen = Seen()

    async def decide(tool: str, given: dict[str, Any], _context: Any) -> Any:
        seen.asked.append((tool, given))
        return PermissionResultDeny(message="DENIED-BY-PROGRAM")

    await _collect(query(prompt=_one("go"), options=_options(where, can_use_tool=decide)), seen)
    return _finish(where, seen)


async def pre_tool_hook_denies(where: Where) -> Seen:
    seen = Seen()

    async def guard(payload: Any, _use_id: str | None, _context: Any) -> Any:
        seen.hooks.append((payload["hook_event_name"], payload.get("tool_name", "")))
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": "HOOK-SAID-NO"}}  # fmt: skip

    hooks: Any = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]}
    await _collect(query(prompt=_one("go"), options=_options(where, hooks=hooks, permission_mode="bypassPermissions")),
                   seen)  # fmt: skip
    return _finish(where, seen)


async def two_turns_with_a_client(where: Where) -> Seen:
    seen = Seen()
    async with ClaudeSDKClient(options=_options(where)) as client:
        for prompt in ("first", "second"):
            await client.query(prompt)
            await _collect(client.receive_response(), seen)
    return _finish(where, seen)


async def partial_messages(where: Where) -> Seen:
    seen = Seen()
    await _collect(query(prompt="hi", options=_options(where, include_partial_messages=True)), seen)
    return _finish(where, seen)


async def max_turns(where: Where) -> Seen:
    seen = Seen()
    options = _options(where, max_turns=1, permission_mode="bypassPermissions")
    await _collect(query(prompt="go", options=options), seen)
    return _finish(where, seen)


async def can_use_tool_saves_a_rule(where: Where) -> Seen:
    """An allow that keeps a rule in the project's local settings: the same call again is not asked."""
    seen = Seen()

    async def decide(tool: str, given: dict[str, Any], _context: Any) -> Any:
        seen.asked.append((tool, given))
        rule = PermissionRuleValue(tool_name="Bash", rule_content=given["command"])
        keep = PermissionUpdate(type="addRules", rules=[rule], behavior="allow", destination="localSettings")
        return PermissionResultAllow(updated_permissions=[keep])

    await _collect(query(prompt=_one("go"), options=_options(where, can_use_tool=decide)), seen)
    return _finish(where, seen)


async def sdk_mcp_server(where: Where) -> Seen:
    """The program's own MCP server, in its process: its tool offered to the model and called through the program."""
    seen = Seen()

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        seen.hooks.append(("add", json.dumps(args, sort_keys=True)))
        return {"content": [{"type": "text", "text": f"SUM={args['a'] + args['b']:g}"}]}

    calc = create_sdk_mcp_server("calc", "1.2.3", tools=[add])
    options = _options(where, mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"])
    await _collect(query(prompt=_one("add them"), options=options), seen)
    return _finish(where, seen)


async def programmatic_agents(where: Where) -> Seen:
    """Agent types defined in the program: the CLI lists them in its answer to initialize, and the model may start
    one as a subagent (its prompt becomes the subagent's instructions)."""
    seen = Seen()
    reviewer = AgentDefinition(description="Reviews code", prompt="REVIEWER-INSTRUCTIONS", tools=["Read"])
    async with ClaudeSDKClient(options=_options(where, agents={"reviewer": reviewer})) as client:
        info = await client.get_server_info() or {}
        seen.agents = [a["name"] for a in info.get("agents", []) if a.get("name") == "reviewer"]
    return _finish(where, seen)


async def a_subagent_forwarded(where: Where) -> Seen:
    """A foreground subagent called by its newer name (Agent): its lifecycle messages, its prompt and (asked for)
    its text attributed to the call."""
    seen = Seen()
    greeter = AgentDefinition(
        description="Greets.", prompt="GREETER-PROMPT: reply with one sentence.", background=False
    )
    options = _options(where, agents={"greeter": greeter}, forward_subagent_text=True, allowed_tools=["Agent"])
    await _collect(query(prompt="greet", options=options), seen)
    return _finish(where, seen)


async def only_some_tools(where: Where) -> Seen:
    seen = Seen()
    await _collect(query(prompt="hi", options=_options(where, tools=["Read", "Glob"])), seen)
    return _finish(where, seen)


async def project_settings_left_out(where: Where) -> Seen:
    """The project's settings deny Bash; with only the user's settings read, the call runs (in bypass mode)."""
    (where.cwd / ".claude").mkdir(exist_ok=True)
    (where.cwd / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash"]}}))
    seen = Seen()
    options = _options(where, setting_sources=["user"], permission_mode="bypassPermissions")
    await _collect(query(prompt=_one("go"), options=options), seen)
    return _finish(where, seen)


async def client_controls(where: Where) -> Seen:
    """A mode change lets an edit run unasked; a model change reaches the next request."""
    seen = Seen()
    async with ClaudeSDKClient(options=_options(where)) as client:
        await client.set_permission_mode("acceptEdits")
        await client.query("write it")
        await _collect(client.receive_response(), seen)
        await client.set_model("claude-haiku-4-5")
        await client.query("and now")
        await _collect(client.receive_response(), seen)
    return _finish(where, seen)


async def file_checkpoints_rewound(where: Where) -> Seen:
    """Checkpoints on, two prompts' edits and a command's file; rewinds to the first prompt (and an unknown one)."""
    seen, cwd = Seen(), str(where.cwd)
    (where.cwd / "keep.txt").write_text("orig\nsecond\n")
    options = _options(where, enable_file_checkpointing=True, permission_mode="bypassPermissions")
    async with ClaudeSDKClient(options=options) as client:
        for prompt in ("first", "second"):
            await client.query(prompt)
            await _collect(client.receive_response(), seen)
        entries = [json.loads(line) for f in Path(where.env["CLAUDE_CONFIG_DIR"]).glob("projects/*/*.jsonl")
                   for line in f.read_text().splitlines()]  # fmt: skip
        first = next(e["uuid"] for e in entries if e.get("type") == "user" and e["message"]["content"] == "first")
        for message in (first, "no-such-message"):
            ask = {"subtype": "rewind_files", "user_message_id": message, "dry_run": True}
            answer = await cast(Any, client._query)._send_control_request(ask)
            seen.rewound.append(json.loads(json.dumps(answer).replace(cwd, "")))
        await client.rewind_files(first)
    seen.rewound.append({str(p.relative_to(where.cwd)): p.read_text() for p in sorted(where.cwd.rglob("*.txt"))})
    seen.results = []  # claude counts a tool-using turn's num_turns otherwise (a gap of its own, not this program's)
    return _finish(where, seen)


PROGRAMS: dict[str, Callable[[Where], Awaitable[Seen]]] = {
    "one-shot query": one_shot,
    "can_use_tool allows with new input": can_use_tool_allows_with_new_input,
    "can_use_tool denies": can_use_tool_denies,
    "a PreToolUse hook denies": pre_tool_hook_denies,
    "two turns with a client": two_turns_with_a_client,
    "partial messages": partial_messages,
    "max turns": max_turns,
    "an API error": one_shot,  # the same program, a server that refuses
    "mode and model set by a client": client_controls,
    "can_use_tool saves a rule": can_use_tool_saves_a_rule,
    "an in-process SDK MCP server": sdk_mcp_server,
    "agents defined by the program": programmatic_agents,
    "only some built-in tools": only_some_tools,
    "project settings left out": project_settings_left_out,
    "a subagent forwarded": a_subagent_forwarded,
    "file checkpoints rewound": file_checkpoints_rewound,
}
SCRIPTS: dict[str, dict[str, Any]] = {
    "one-shot query": script("HELLO-FROM-MODEL"),
    "can_use_tool allows with new input": script(bash_turn("touch hi.txt"), "DONE"),
    "can_use_tool denies": script(bash_turn("touch hi.txt"), "DONE"),
    "a PreToolUse hook denies": script(bash_turn("touch hi.txt"), "DONE"),
    "two turns with a client": script("ANSWER-ONE", "ANSWER-TWO"),
    "partial messages": script({"text": "STREAMED-IN-PIECES", "chunk": 4}),
    "max turns": script(bash_turn("echo one", "toolu_a"), bash_turn("echo two", "toolu_b"), "NEVER"),
    "an API error": script(
        {"error": {"status": 400, "type": "invalid_request_error", "message": "BAD-REQUEST"}, "repeat": 10}
    ),
    "can_use_tool saves a rule": script(
        bash_turn("touch a.txt", "toolu_a"), bash_turn("touch a.txt", "toolu_b"), "DONE"
    ),
    "an in-process SDK MCP server": script(
        {"content": [{"type": "tool_use", "id": "toolu_mcp", "name": "mcp__calc__add", "input": {"a": 2, "b": 3}}]},
        "ADDED",
    ),
    "agents defined by the program": script("UNUSED"),
    "only some built-in tools": script("FEW-TOOLS"),
    "project settings left out": script(bash_turn("touch ran.txt"), "DONE"),
}


def script_for(name: str, cwd: Path) -> dict[str, Any]:
    """The scripted model's turns for program `name` in working directory `cwd`."""
    if name == "a subagent forwarded":
        call = {"type": "tool_use", "id": "toolu_agent", "name": "Agent",
                "input": {"subagent_type": "greeter", "description": "Greet", "prompt": "say hi",
                          "run_in_background": False}}  # fmt: skip
        greeter = {"name": "greeter", "match": {"system": "GREETER-PROMPT"}, "turns": ["HI-FROM-SUB"]}
        main = script({"content": [call]}, "DONE")
        return {"routes": [greeter, *main["routes"]]}
    if name == "mode and model set by a client":
        call = {"type": "tool_use", "id": "toolu_write", "name": "Write",
                "input": {"file_path": str(cwd / "notes.txt"), "content": "written\n"}}  # fmt: skip
        return script({"content": [call]}, "WROTE-IT", "ON-HAIKU")
    if name == "file checkpoints rewound":
        w: Callable[[str, str], Any] = lambda f, c: ("Write", {"file_path": f"{cwd}/{f}", "content": c})  # noqa: E731
        calls = [[("Read", {"file_path": f"{cwd}/keep.txt"}), w("new.txt", "1\n")], "DONE1",
                 [w("new.txt", "2\n3\n"), w("sub/made.txt", "m\n"), ("Bash", {"command": "echo x >b.txt"})],
                 "DONE2"]  # fmt: skip
        use: Callable[..., Any] = lambda i, j, n, a: {"type": "tool_use", "id": f"t{i}{j}", "name": n, "input": a}  # noqa: E731
        return script(*[t if isinstance(t, str) else {"content": [use(i, j, *c) for j, c in enumerate(t)]}
                        for i, t in enumerate(calls)])  # fmt: skip
    return SCRIPTS[name]


def run(name: str, where: Where) -> Seen:
    """Run program `name` to its end (DEADLINE at most)."""
    return run_program(PROGRAMS[name], where)


def run_program(program: Callable[[Where], Awaitable[S]], where: Where) -> S:
    """Run `program` to its end (DEADLINE at most)."""

    async def bounded() -> S:
        with anyio.fail_after(DEADLINE):
            return await program(where)

    return anyio.run(bounded)
