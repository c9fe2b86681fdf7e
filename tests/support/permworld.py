"""A scratch world for comparing permission decisions: a git repository with settings files, a home, and
directories beside it; one batch of scripted tool calls; and what really happened to each call."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentteams.mockapi import MockServer
from tests.support import realclaude as rc

Outcome = Literal["allow", "deny"]
MARK = "PERMWORLD"  # in the prompt: the scripted route answers only the main agent's requests
SECRET = "secret-0f3a"  # in every file a Read may reach: a result holding it read the file

# files every world starts with (relative to the world); directories are made for each
FILES = {
    "repo/notes.txt": f"notes {SECRET}\n",
    "repo/junk.txt": "junk\n",
    "repo/keep.txt": "keep\n",
    "repo/secrets/key.txt": f"key {SECRET}\n",
    "repo/package.json": json.dumps(
        {"name": "w", "version": "1.0.0", "scripts": {"test": "touch npm-test", "other": "touch npm-other"}}
    ),
    "home/private/k.txt": f"home private {SECRET}\n",
    "home/public.txt": f"home public {SECRET}\n",
    "extra/r.txt": f"extra {SECRET}\n",
    "outside/r.txt": f"outside {SECRET}\n",
    "outside/deny/s.txt": f"outside denied {SECRET}\n",
}
DIRS = ("repo/src/locked", "repo/docs")


@dataclass(frozen=True)
class Case:
    """One scripted tool call, the rule or setting it exercises, and how to see that it ran.

    `args` and the settings may hold `{W}` (the world's absolute path). `ran(world, result_text)` says
    whether the call's effect happened (a file created or removed, or the secret in a Read's result).
    `expect` may differ by Claude Code version; `ours` is set only where we knowingly differ from a version."""

    row: str
    tool: str
    args: dict[str, Any]
    ran: Callable[[Path, str], bool]
    expect: Outcome | dict[str, Outcome]
    ours: Outcome | None = None

    def expected(self, version: str) -> Outcome:
        return self.expect if isinstance(self.expect, str) else self.expect[version]


@dataclass(frozen=True)
class Arrangement:
    """Settings files (user, project, local; None = no such file), command-line flags given to both CLIs, and the
    calls made under them."""

    name: str
    cases: tuple[Case, ...]
    project: dict[str, Any] | None = None
    local: dict[str, Any] | None = None
    user: dict[str, Any] = field(default_factory=dict)
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Observed:
    """What happened to one call: whether its effect happened, and the tool_result the server got."""

    ran: bool
    is_error: bool
    text: str

    @property
    def outcome(self) -> Outcome | str:
        """allow or deny; anything half-way (ran but reported an error, or neither) is spelled out."""
        if self.ran and not self.is_error:
            return "allow"
        if not self.ran and self.is_error:
            return "deny"
        return f"ran={self.ran} is_error={self.is_error}: {self.text[:200]!r}"


def created(rel: str) -> Callable[[Path, str], bool]:
    return lambda w, _text: (w / rel).exists()


def removed(rel: str) -> Callable[[Path, str], bool]:
    return lambda w, _text: not (w / rel).exists()


def any_of(*rels: str) -> Callable[[Path, str], bool]:
    return lambda w, _text: any((w / r).exists() for r in rels)


def read_it(_w: Path, text: str) -> bool:
    return SECRET in text


def _fill(value: Any, world: Path) -> Any:
    return json.loads(json.dumps(value).replace("{W}", str(world)))


def build(world: Path, arr: Arrangement, version: str) -> None:
    """The world afresh (same absolute paths each time): files, git repository, settings, a seeded config dir."""
    shutil.rmtree(world, ignore_errors=True)
    for d in DIRS:
        (world / d).mkdir(parents=True)
    for rel, text in FILES.items():
        (world / rel).parent.mkdir(parents=True, exist_ok=True)
        (world / rel).write_text(text)
    repo = world / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".claude").mkdir()
    for name, data in (("settings.json", arr.project), ("settings.local.json", arr.local)):
        if data is not None:
            (repo / ".claude" / name).write_text(json.dumps(_fill(data, world), indent=2))
    config = world / "config"
    rc.seed_home(config, [repo], version)  # the real CLI's own state; ours ignores the extra user key
    user = json.loads((config / "settings.json").read_text())
    (config / "settings.json").write_text(json.dumps({**user, **_fill(arr.user, world)}, indent=2))


def script(world: Path, arr: Arrangement) -> dict[str, Any]:
    """All the calls in one assistant turn (ids name the case), then a closing text."""
    blocks = [{"type": "tool_use", "id": f"toolu_case_{i:02d}", "name": c.tool, "input": _fill(c.args, world)}
              for i, c in enumerate(arr.cases)]  # fmt: skip
    return {"routes": [rc.main_route("main", MARK, [{"content": blocks}, "done"])]}


def results(server: MockServer) -> dict[str, dict[str, Any]]:
    """Every tool_result block the server received, by tool_use id."""
    out: dict[str, dict[str, Any]] = {}
    for req in server.requests:
        body = req.get("body")
        if req["method"] != "POST" or not isinstance(body, dict) or not body.get("messages"):
            continue
        for message in body["messages"]:  # one turn's results may come in more than one user message
            content = message["content"]
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result":
                    out[block["tool_use_id"]] = block
    return out


def text_of(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def observe(world: Path, arr: Arrangement, server: MockServer) -> list[Observed]:
    got = results(server)
    seen = []
    for i, case in enumerate(arr.cases):
        block = got.get(f"toolu_case_{i:02d}")
        text = text_of(block) if block else "<no tool_result>"
        seen.append(Observed(case.ran(world, text), bool(block and block.get("is_error")), text))
    return seen


def run_batch(
    world: Path,
    arr: Arrangement,
    version: str,
    argv: list[str],
    launch: Callable[..., subprocess.CompletedProcess[str]],
) -> list[Observed]:
    """Build the world, serve the batch, run `argv + flags + [-p prompt]` in the repository, observe every call."""
    build(world, arr, version)
    server = MockServer(script(world, arr)).start()
    try:
        env = rc.claude_env(world / "config", server.base_url, extra={"PYTHONIOENCODING": "utf-8"})
        proc = launch([*argv, *arr.flags, "-p", f"{MARK} go"], env, world / "repo")
        assert proc.returncode == 0, f"{argv[0]}: exit {proc.returncode}: {proc.stderr[-800:]}"
        return observe(world, arr, server)
    finally:
        server.stop()


def launcher(timeout: float) -> Callable[..., subprocess.CompletedProcess[str]]:
    """How run_batch starts a CLI: a plain process with a hang guard."""

    def launch(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)

    return launch


def ids(arrangements: tuple[Arrangement, ...]) -> list[str]:
    """Test ids from the arrangements' names."""
    return [re.sub(r"\W+", "-", a.name).strip("-") for a in arrangements]
