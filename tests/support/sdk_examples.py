"""The Claude Agent SDK's own examples (from its PyPI sdist, fetched into .cache/) run unchanged against a CLI and a
scripted Messages API server (the answers are sdk_example_script.py's), each reduced to what can be compared."""

from __future__ import annotations

import fcntl
import json
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

from agentteams.mockapi import MockServer
from tests.support import sdk_builtins, sdk_example_script
from tests.support.sdk_cli_patch import CLI_VAR, TRACE_VAR

ROOT = Path(__file__).resolve().parents[2]
SDK_VERSION = version("claude-agent-sdk")
CACHE = ROOT / ".cache" / "sdk-sdist"
DEADLINE = 180.0  # seconds an example may run

# example name -> (file in examples/, its arguments); one case per sub-example of the files that take one
CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "quick_start": ("quick_start.py", ()),
    "agents": ("agents.py", ()),
    "filesystem_agents": ("filesystem_agents.py", ()),
    **{f"hooks {n}": ("hooks.py", (n,))
       for n in ("PreToolUse", "UserPromptSubmit", "PostToolUse", "DecisionFields", "ContinueControl")},
    "include_partial_messages": ("include_partial_messages.py", ()),
    "max_budget_usd": ("max_budget_usd.py", ()),
    "mcp_calculator": ("mcp_calculator.py", ()),
    "plugin_example": ("plugin_example.py", ()),
    **{f"setting_sources {n}": ("setting_sources.py", (n,))
       for n in ("default", "disable_all", "user_only", "project_and_user")},
    "stderr_callback_example": ("stderr_callback_example.py", ()),
    **{f"streaming_mode {n}": ("streaming_mode.py", (n,))
       for n in ("basic_streaming", "multi_turn_conversation", "concurrent_responses", "with_interrupt",
                 "manual_message_handling", "with_options", "async_iterable_prompt", "bash_command",
                 "control_protocol", "error_handling")},
    "system_prompt": ("system_prompt.py", ()),
    "tool_permission_callback": ("tool_permission_callback.py", ()),
    "tools_option": ("tools_option.py", ()),
}  # fmt: skip
# what in examples/ is not run, and why
NOT_RUN: dict[str, str] = {
    "streaming_mode_ipython.py": "snippets for pasting into IPython: top-level `async with`/`await` is a SyntaxError "
    "for python itself",
    "streaming_mode_trio.py": "imports trio, which is not installed (not a dependency of the SDK or of ours)",
    "session_stores/": "a package of SessionStore adapters for Postgres, Redis and S3 (asyncpg, redis, boto3 and "
    "live servers), not a program",
    "plugins/": "the demo plugin plugin_example.py loads, not a program",
}


def sdist_root() -> Path:
    """The installed SDK version's sdist, extracted under .cache/ (downloaded with pip on first use)."""
    where = CACHE / f"claude_agent_sdk-{SDK_VERSION}"
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers fetch once
        if (where / "examples").is_dir():
            return where
        archive = CACHE / f"claude_agent_sdk-{SDK_VERSION}.tar.gz"
        if not archive.is_file():
            got = subprocess.run([sys.executable, "-m", "pip", "download", f"claude-agent-sdk=={SDK_VERSION}",
                                  "--no-binary", ":all:", "--no-deps", "-q", "-d", str(CACHE)],
                                 capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
            if got.returncode != 0 or not archive.is_file():
                raise RuntimeError(f"pip download of the SDK's sdist failed: {got.stderr[-2000:]}")
        with tarfile.open(archive) as tar:
            tar.extractall(CACHE, filter="data")
    return where


def unlisted_examples() -> list[str]:
    """Entries of examples/ neither run nor explained (a newer sdist's new example)."""
    names = [p.name + ("/" if p.is_dir() else "") for p in (sdist_root() / "examples").iterdir()]
    files = {f for f, _ in CASES.values()}
    return sorted(n for n in names if n not in files and n not in NOT_RUN and n != "__pycache__/")


@dataclass
class Outcome:
    """What running one example showed."""

    code: int
    lines: list[str]  # stdout, normalised
    kinds: list[str]  # the messages the SDK parsed, in order (see `_kinds`)
    files: list[str]  # files the run left in the project (beside the sdist's own)
    stderr: str = field(default="", compare=False)
    raw: str = field(default="", compare=False)


def prepare(work: Path) -> None:
    """A copy of the sdist (the examples use their parent as the project) with the project files the SDK repository
    has there and the sdist lacks: the agent filesystem_agents.py looks for and the /commit setting_sources.py does."""
    shutil.copytree(sdist_root(), work)
    agents, commands = work / ".claude" / "agents", work / ".claude" / "commands"
    agents.mkdir(parents=True)
    commands.mkdir(parents=True)
    (agents / "test-agent.md").write_text("---\nname: test-agent\ndescription: A test agent\ntools: Read\n---\n"
                                          "You are a test agent.\n")  # fmt: skip
    (commands / "commit.md").write_text("---\ndescription: Commit the staged changes\n---\nCommit them.\n")


def _listing(work: Path) -> set[str]:
    return {str(p.relative_to(work)) for p in work.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def run(name: str, cli: Path, env: dict[str, str], work: Path) -> Outcome:
    """Run example `name` with `cli`, in a fresh copy of the sdist at `work`, against its own scripted server."""
    prepare(work)
    before = _listing(work)
    trace = work.parent / "trace.jsonl"
    file, args = CASES[name]
    with MockServer(sdk_example_script.script(work)) as server:
        full = {**env, "ANTHROPIC_BASE_URL": server.base_url, CLI_VAR: str(cli), TRACE_VAR: str(trace),
                "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": "0"}  # fmt: skip
        try:
            proc = subprocess.run([sys.executable, "-m", "tests.support.sdk_cli_patch", str(work / "examples" / file),
                                   *args], cwd=work, env=full, capture_output=True, text=True, timeout=DEADLINE,
                                  stdin=subprocess.DEVNULL, check=False)  # fmt: skip
            code, out, err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as e:
            code, out, err = -9, _text(e.stdout), _text(e.stderr) + f"\n<killed after {DEADLINE}s>"
    files = sorted(_listing(work) - before)
    return Outcome(code, normalise(out, work), _kinds(trace), files, stderr=err, raw=out)


def _text(data: bytes | str | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""


_REPR = re.compile(r"^(\w+)\((.*)$")
# a count the model was interrupted in: how far it got is the machine's timing, that it was cut short is not (an
# example that prints only the answer's start marks the cut with "...")
_COUNT = re.compile(r"^(Claude: )((?:\d+ ?)+)(?:\.\.\.)?$")
# the examples whose printed lines interleave with the answers by wall-clock timing (sleeps against a background
# reader): their lines are compared as a multiset
UNORDERED = frozenset({"streaming_mode concurrent_responses"})
_MASKS = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"\$\d+\.\d+"), "$<cost>"),
    (re.compile(r"Duration: \d+ms"), "Duration: <ms>"),
]


def normalise(out: str, work: Path) -> list[str]:
    """stdout without what differs from run to run: the project path, uuids, costs, durations; a printed message
    object becomes its class (a StreamEvent its event type, a SystemMessage or ResultMessage its subtype), and system
    messages other than init (each CLI sends its own status lines) are left out, and so are built-in entries of
    printed lists."""
    lines = []
    for given in out.replace(str(work), "<WORK>").splitlines():
        line, found = given, _REPR.match(given)
        if found and found.group(1).endswith(("Message", "Event")):
            kind, rest = found.groups()
            sub = re.search(r"(?:subtype|'type')='?\"?:?\s*'?(\w+)", rest)
            if kind == "SystemMessage" and (sub is None or sub.group(1) != "init"):
                continue
            keep = sub is not None and kind in ("SystemMessage", "ResultMessage", "StreamEvent")
            line = f"{kind}({sub.group(1) if keep and sub else ''})"
        for pattern, mask in _MASKS:
            line = pattern.sub(mask, line)
        count = _COUNT.match(line)
        if count is not None:
            words = count.group(2).split()
            whole = [str(n) for n in range(1, len(words) + 1)]  # the last may be cut mid-number ("31 3")
            if words[:-1] == whole[:-1] and whole[-1].startswith(words[-1]) and len(words) < 100:
                line = f"{count.group(1)}1 2 3 ... <cut short>"
        # the examples print the init's and get_server_info's lists whole: each CLI's built-in commands, agents,
        # styles, plugins and tools are its own (we do not pretend to have claude's), so they are left out and only
        # the project's own entries are compared (sdk_builtins.py)
        kept = sdk_builtins.without_builtins(line)
        if kept is not None:
            lines.append(kept)
    return lines


def _kinds(trace: Path) -> list[str]:
    """The parsed messages: class and subtype, StreamEvents by event type; system messages other than init, and
    repeats of one kind in a row, left out (how many stream events or status lines a CLI sends is its own)."""
    kinds: list[str] = []
    for raw in trace.read_text().splitlines() if trace.is_file() else []:
        item = json.loads(raw)
        if item["kind"] == "SystemMessage" and item.get("subtype") != "init":
            continue
        label = item["kind"] + (f":{item['event']}" if item.get("event") else "")
        label += f":{item['subtype']}" if item["kind"] in ("SystemMessage", "ResultMessage") else ""
        if not kinds or kinds[-1] != label:
            kinds.append(label)
    return kinds
