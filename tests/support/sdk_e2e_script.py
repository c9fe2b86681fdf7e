"""The scripted model for the Agent SDK repository's e2e-tests (scripts/sdk_e2e.py): an answer to each prompt they
send, calling the tool each test is about (Bash under hooks, Write under can_use_tool, its SDK MCP tools, Agent)."""

from __future__ import annotations

from typing import Any

from tests.support.sdk_routes import Route, bash, steps, text
from tests.support.sdk_routes import script as _script

EXACTLY = "{{re:Reply with exactly: (\\w+)}}"
GREETER = ("Agent", {"subagent_type": "greeter", "prompt": "say hi", "description": "Greet",
                     "run_in_background": False})  # fmt: skip


def _structured(
    name: str, prompt: str, calls: list[list[tuple[str, dict[str, Any]]]], value: dict[str, Any]
) -> list[Route]:
    """A structured-output run: the exploring calls, then the StructuredOutput tool with `value`, then a remark."""
    return steps(name, prompt, [*calls, [("StructuredOutput", value)]], "Reported.")


def script() -> dict[str, Any]:
    routes: list[Route] = [
        text("greeter", "", "Hi there, friend!", system="Reply with one short friendly sentence"),
        text("bad-model", "", {"error": {"status": 404, "type": "not_found_error",
                                         "message": "model: claude-nonexistent-model-for-sdk-e2e"}},
             any="claude-nonexistent-model-for-sdk-e2e"),
        text("exactly", "Reply with exactly:", EXACTLY),
        *steps("agent-once", "Use the Agent tool exactly once", [[GREETER]], "DONE"),
        *steps("run-this", "Run this bash command: ", [[bash("{{re:Run this bash command: (.+)}}")]], "Ran it."),
        *steps("run-colon", "Run: ", [[bash("{{re:Run: (.+)}}")]], "Ran it."),
        *steps("run-the", "Run the command: ", [[bash("{{re:Run the command: (\\S+ \\S+)}}")]], "Ran it."),
        *steps("write", "Use the Write tool to create the file",
               [[("Write", {"file_path": "{{re:create the file (\\S+) containing}}", "content": "hello"})]],
               "Wrote it."),
        *steps("echo", "Call the mcp__test__echo tool", [[("mcp__test__echo", {"text": "hi"})]], "Echoed."),
        *steps("greet-then-echo", "First use the greet tool",
               [[("mcp__test__greet", {"name": "Alice"})], [("mcp__test__echo", {"text": "test"})]], "Done."),
        *steps("multi", "Call mcp__multi__echo",
               [[("mcp__multi__echo", {"text": "test"}), ("mcp__multi__greet", {"name": "Bob"})]], "Both done."),
        *steps("noperm", "Call the mcp__noperm__echo tool", [[("mcp__noperm__echo", {"text": "hi"})]], "Tried."),
        text("jokes", "Think of three jokes", {"content": [
            {"type": "thinking", "thinking": "Jokes about 2 + 2, atoms and code.", "signature": "sig-mock"},
            {"type": "text", "text": "Atoms make up everything."}]}),
        text("think-2-2", "Think step by step about what 2 + 2 equals", {"content": [
            {"type": "thinking", "thinking": "2 + 2: two and two more make 4.", "signature": "sig-mock"},
            {"type": "text", "text": "4"}]}),
        *_structured("count-py", "Count how many Python files are in src/claude_agent_sdk/",
                     [[("Glob", {"pattern": "**/*.py"})]], {"file_count": 3, "has_tests": True, "test_file_count": 1}),
        *_structured("hello-world", "Analyze this text: 'Hello world'", [],
                     {"analysis": {"word_count": 2, "character_count": 11}, "words": ["Hello", "world"]}),
        *_structured("framework", "Search for test files in the tests/ directory",
                     [[("Grep", {"pattern": "import pytest"})]],
                     {"has_tests": True, "test_framework": "pytest", "test_count": 1}),
        *_structured("readme", "Count how many files are in the current directory",
                     [[("Glob", {"pattern": "*"})]], {"file_count": 2, "has_readme": False}),
        text("count-slowly", "Count from 1 to 100 slowly.", {"text": " ".join(map(str, range(1, 101))),
                                                             "chunk": 5, "delta_delay_ms": 20}),
        text("number", "Just", "{{re:What is (\\d\\+\\d)}} is the sum."),
        text("list-agents", "List available agents", "I have the agents listed."),
    ]  # fmt: skip
    return _script(routes)
