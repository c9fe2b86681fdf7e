"""The scripted model for the SDK's examples (sdk_examples.py): an answer to each prompt an example sends, calling
the tools the example is about (its calculator, Bash under its hooks, Write under its permission callback, ...)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.sdk_routes import Route, bash, slow, steps, text
from tests.support.sdk_routes import script as _script

FOUR = "2 + 2 = 4."


def _agent(kind: str, prompt: str) -> tuple[str, dict[str, Any]]:
    return (
        "Agent",
        {"subagent_type": kind, "description": f"Ask the {kind}", "prompt": prompt, "run_in_background": False},
    )


def _calc(tool: str, **args: float) -> tuple[str, dict[str, Any]]:
    return (f"mcp__calc__{tool}", args)


def _subagents() -> list[Route]:
    """The examples' subagents, known by their instructions."""
    return [
        text("code-reviewer", "", "REVIEW: the types are clear.", system="You are a code reviewer"),
        text("doc-writer", "", "DOC: AgentDefinition defines a subagent.", system="technical documentation expert"),
        text("analyzer", "", "ANALYSIS: the examples are Python files.", system="You are a code analyzer"),
    ]


def _quick_start(work: Path) -> list[Route]:
    write = ("Write", {"file_path": str(work / "hello.txt"), "content": "Hello, World!"})
    return [
        text("python", "Explain what Python is in one sentence.", "Python is a programming language."),
        *steps("hello-file", "Create a file called hello.txt with 'Hello, World!' in it", [[write]],
               "Created hello.txt."),
        *steps("reviewer", "Use the code-reviewer agent", [[_agent("code-reviewer", "Review types.py")]],
               "The reviewer says the types are clear."),
        *steps("doc", "Use the doc-writer agent", [[_agent("doc-writer", "Explain AgentDefinition")]],
               "The doc writer explained it."),
        *steps("analyze", "Use the analyzer agent", [[_agent("analyzer", "Find the Python files in examples/")]],
               "The analyzer found them."),
        text("three-words", "Say hello in exactly 3 words", "Hello there, friend."),
    ]  # fmt: skip


def _hooks(work: Path) -> list[Route]:
    def write(name: str) -> list[list[tuple[str, dict[str, Any]]]]:
        return [[("Write", {"file_path": str(work / name), "content": "test data"})]]

    return [
        *steps("foo-sh", "Run the bash command: ./foo.sh --help", [[bash("./foo.sh --help")]], "It was blocked."),
        *steps("echo-hooks", "Run the bash command: echo 'Hello from hooks example!'",
               [[bash("echo 'Hello from hooks example!'")]], "It printed the greeting."),
        text("pink", "What's my favorite color?", "Your favorite color is hot pink.", any="hot pink"),
        text("no-color", "What's my favorite color?", "I do not know your favorite color."),
        *steps("ls-missing", "Run this command: ls /nonexistent_directory", [[bash("ls /nonexistent_directory")]],
               "That directory does not exist."),
        *steps("important", "to a file called important_config.txt", write("important_config.txt"),
               "The write was refused."),
        *steps("regular", "to a file called regular_file.txt", write("regular_file.txt"), "Wrote regular_file.txt."),
        *steps("critical", "Run this bash command: echo 'CRITICAL ERROR: system failure'",
               [[bash("echo 'CRITICAL ERROR: system failure'")]], "CONTINUED-AFTER-CRITICAL"),
    ]  # fmt: skip


def _calculator() -> list[Route]:
    return [
        text("list-tools", "List your tools", "I have add, subtract, multiply, divide, sqrt and power."),
        *steps("add", "Calculate 15 + 27", [[_calc("add", a=15, b=27)]], "15 + 27 = 42."),
        *steps("divide", "What is 100 divided by 7?", [[_calc("divide", a=100, b=7)]], "About 14.29."),
        *steps("sqrt", "Calculate the square root of 144", [[_calc("sqrt", n=144)]], "It is 12."),
        *steps("power", "What is 2 raised to the power of 8?", [[_calc("power", base=2, exponent=8)]], "It is 256."),
        *steps("complex", "Calculate (12 + 8) * 3 - 10",
               [[_calc("add", a=12, b=8)], [_calc("multiply", a=20, b=3)], [_calc("subtract", a=60, b=10)]],
               "It is 50."),
    ]  # fmt: skip


def _streaming(work: Path) -> list[Route]:
    write = ("Write", {"file_path": str(work / "hello.txt"), "content": "Hello, greetings!\n"})
    counting = " ".join(str(n) for n in range(1, 101))
    return [
        text("paris", "What's the capital of France?", "Paris."),
        text("population", "What's the population of that city?", "About 2.1 million."),
        text("sqrt-144", "What is the square root of 144?", "12."),
        text("ten-percent", "What is 10% of 80?", "8."),
        text("count-100", "Count from 1 to 100 slowly", slow(counting, 6.0)),
        text("joke", "Never mind, just tell me a quick joke", "Why did the function return? It had closure."),
        text("languages", "List 5 programming languages",
             "Python: data. JavaScript: web. Java: enterprise. Go: services. Rust: systems."),
        *steps("hello-greeting", "Create a simple hello.txt file with a greeting message", [[write]],
               "Created hello.txt."),
        text("hello-questions", "Hello! I have multiple questions.", "Ask away."),
        text("japan", "First, what's the capital of Japan?", "Tokyo."),
        text("fifteen-percent", "Second, what's 15% of 200?", "30."),
        *steps("echo-bash", "Run a bash echo command that says 'Hello from bash!'",
               [[bash("echo 'Hello from bash!'")]], "It printed Hello from bash!"),
        text("count-20", "Count from 1 to 20 slowly", slow(" ".join(str(n) for n in range(1, 21)) * 4, 6.0)),
        text("say-hello", "Just say 'Hello!'", "Hello!"),
        *steps("sleep", "Run a bash sleep command for 5 seconds", [[bash("sleep 5")]], "Done sleeping."),
    ]  # fmt: skip


def _others(work: Path) -> list[Route]:
    readme = ("Read", {"file_path": str(work / "README.md")})
    todo = "Please do the following:\n1. List the files in the current directory"
    hello = ("Write", {"file_path": str(work / "hello.py"), "content": "print('Hello, World!')\n"})
    thinking = {"type": "thinking", "thinking": "Three jokes: atoms, functions, 2 + 2.", "signature": "sig-mock"}
    return [
        text("jokes", "Think of three jokes, then tell one",
             {"content": [thinking, {"type": "text", "text": "Atoms make up everything."}]}),
        *steps("readme", "Read the README.md file and summarize it", [[readme]], "It is the SDK's README."),
        text("hello", "Hello!", "Hello! How can I help?"),
        text("tools", "What tools do you have available?", "I have the tools listed."),
        text("pirate", "What is 2 + 2?", "Arr, 'tis 4.", system="pirate assistant"),
        text("fun-fact", "What is 2 + 2?", "4. Fun fact: 4 is even.", system="end your response with a fun fact"),
        *steps("todo", todo, [[bash("ls")], [hello], [bash("python3 hello.py")]], "All three steps are done."),
        text("four", "What is 2 + 2?", FOUR),
        text("four-tight", "What is 2+2?", FOUR),
    ]  # fmt: skip


def script(work: Path) -> dict[str, Any]:
    """The whole script for a run in project `work` (the sdist's copy)."""
    return _script([*_subagents(), *_quick_start(work), *_hooks(work), *_calculator(), *_streaming(work),
                    *_others(work)])  # fmt: skip
