"""Recording the real Claude Code's session files offline: scripted conversations (plain, tools, errors, two turns,
continue, resume, fork, --session-id, /compact) against our mock server, each step's new files and requests kept."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from tests.support import realclaude as rc
from tests.support.ccnormal import Normaliser

FIXED_ID = "5e551010-0000-4000-8000-00000000abcd"  # what the --session-id scenario asks for
LONG_DIR = "Deep Dir_with.dots " + "x" * 200  # a cwd past the CLI's 200-character slug limit


@dataclass(frozen=True)
class Step:
    args: tuple[str, ...]  # after `claude`; "{A}" is the first session's id
    stdin: str | None = None


@dataclass(frozen=True)
class Scenario:
    name: str
    about: str
    steps: tuple[Step, ...]
    turns: tuple[Any, ...]  # the main route's scripted answers, in order
    subdir: str = ""  # the cwd below the project root


def _p(prompt: str, *extra: str) -> Step:
    return Step(("-p", "--dangerously-skip-permissions", *extra, prompt))


def _stream(*prompts: str) -> Step:
    lines = [json.dumps({"type": "user", "message": {"role": "user", "content": p}}) for p in prompts]
    args = ("-p", "--dangerously-skip-permissions", "--input-format", "stream-json", "--output-format",
            "stream-json", "--verbose")  # fmt: skip
    return Step(args, stdin="\n".join(lines) + "\n")


def _tool(name: str, **inp: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": inp}]}


def _with_text(text: str, turn: dict[str, Any]) -> dict[str, Any]:
    """A turn whose message holds a text block before its tool_use: the CLI writes one entry per block."""
    return {"content": [{"type": "text", "text": text}, *turn["content"]]}


SCENARIOS = (
    Scenario("plain", "one prompt, one text answer", (_p("MARK hello"),), ("Hello there.",)),
    Scenario(
        "tools",
        "text and a Bash call in one message, a Read call, their results, then text",
        (_p("MARK run tools"),),
        (
            _with_text("Running.", _tool("Bash", command="echo hi", description="Say hi")),
            _tool("Read", file_path="{proj}/notes.txt"),
            "All done.",
        ),
    ),
    Scenario(
        "tool_error",
        "Bash exiting 3, a Read of a missing file, a Bash timing out: results with is_error",
        (_p("MARK fail tools"),),
        (
            _tool("Bash", command="echo oops >&2; exit 3", description="Fail"),
            _tool("Read", file_path="{proj}/missing.txt"),
            _tool("Bash", command="sleep 20", description="Slow", timeout=1000),
            "All failed.",
        ),
    ),
    Scenario(
        "two_turns",
        "two prompts in one process (stream-json input)",
        (_stream("MARK one", "MARK two"),),
        ("First answer.", "Second answer."),
    ),
    Scenario(
        "continue",
        "a session, then `-c` in the same cwd",
        (_p("MARK first"), _p("MARK again", "-c")),
        ("First answer.", "Continued answer."),
    ),
    Scenario(
        "resume",
        "session A, session B, then `--resume A`",
        (_p("MARK alpha"), _p("MARK beta"), _p("MARK back to alpha", "--resume", "{A}")),
        ("Alpha answer.", "Beta answer.", "Resumed answer."),
    ),
    Scenario(
        "fork",
        "session A, then `--resume A --fork-session`",
        (_p("MARK original"), _p("MARK forked", "--resume", "{A}", "--fork-session")),
        ("Original answer.", "Forked answer."),
    ),
    Scenario(
        "session_id",
        "`--session-id UUID` names the session",
        (_p("MARK named", "--session-id", FIXED_ID),),
        ("Named answer.",),
    ),
    Scenario(
        "compact",
        "a session with a tool call, `-c` a second turn, `-c` `/compact`, then `-c` again",
        (_p("MARK before compact"), _p("MARK second", "-c"), _p("/compact", "-c"), _p("MARK after compact", "-c")),
        (
            _tool("Bash", command="echo one", description="One"),
            "Before answer.",
            "Second answer.",
            "<analysis>MOCKANALYSIS</analysis>\n<summary>MOCKSUMMARY of the chat</summary>",
            "After answer.",
        ),
    ),
    Scenario(
        "auto_compact",
        "an answer reporting a context past the window, then `-c`: the CLI compacts by itself first",
        (_p("MARK big"), _p("MARK next", "-c")),
        (
            {
                "content": [{"type": "text", "text": "Big answer."}],
                "usage": {"input_tokens": 990000, "output_tokens": 9},
            },
            "<analysis>MOCKANALYSIS</analysis>\n<summary>MOCKSUMMARY auto</summary>",
            "Next answer.",
        ),
    ),
    Scenario(
        "long_cwd",
        "a cwd with spaces, dots, underscores and over 200 characters",
        (_p("MARK deep"),),
        ("Deep answer.",),
        subdir=LONG_DIR,
    ),
)


@dataclass
class Recording:
    """What one scenario left: per step its argv, exit code, new or grown files, and the model requests."""

    scenario: Scenario
    cwd: Path
    config: Path
    steps: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # path below config -> final text (jsonl only)


def _snapshot(config: Path) -> dict[str, int]:
    return {str(p.relative_to(config)): p.stat().st_size for p in sorted(config.rglob("*")) if p.is_file()}


def _request_summary(record: dict[str, Any]) -> dict[str, Any]:
    body = record.get("body") or {}
    return {"route": record.get("route"), "tools": bool(body.get("tools")), "messages": body.get("messages", [])}


def _script(scenario: Scenario, proj: Path) -> dict[str, Any]:
    turns = json.loads(json.dumps(list(scenario.turns)).replace("{proj}", str(proj)))
    return {"routes": [rc.main_route("main", "MARK", turns)]}


def record(scenario: Scenario, version: str, root: Path) -> Recording:
    """Run `scenario` with claude `version` under `root` (wiped first), offline."""
    shutil.rmtree(root, ignore_errors=True)
    proj = root / "proj"
    cwd = proj / scenario.subdir if scenario.subdir else proj
    cwd.mkdir(parents=True)
    (proj / "notes.txt").write_text("hello notes\n", encoding="utf-8")
    config = root / "config"
    rec = Recording(scenario, cwd, config)
    with MockServer(_script(scenario, proj)) as server:
        rc.seed_home(config, [cwd], version)
        env = rc.claude_env(config, server.base_url)
        first_id = ""
        for step in scenario.steps:
            before, seen = _snapshot(config), len(server.requests)
            argv = [a.replace("{A}", first_id) for a in step.args]
            proc = subprocess.run([str(rc.claude_bin(version)), *argv], cwd=cwd, env=env, input=step.stdin,
                                  capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
            after = _snapshot(config)
            changed = [p for p, size in after.items() if before.get(p) != size]
            if not first_id:
                first_id = next(
                    (Path(p).stem for p in changed if p.startswith("projects/") and p.endswith(".jsonl")), ""
                )
            posts = [r for r in server.requests[seen:] if r["method"] == "POST" and "/messages" in r["path"]]
            rec.steps.append({"argv": ["claude", *argv], "exit": proc.returncode, "stdout": proc.stdout.strip()[-300:],
                              "new_or_grown_files": changed,
                              "requests": [_request_summary(r) for r in posts]})  # fmt: skip
    for path in sorted(config.rglob("*.jsonl")):
        rec.files[str(path.relative_to(config))] = path.read_text(encoding="utf-8")
    return rec


def normalised(rec: Recording, version: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The manifest and the files of a recording, normalised against one mapping."""
    run_root = str(rec.config.parent)  # kept as it is: the generator records under a fixed /tmp/ccgold/<scenario>
    norm = Normaliser(run_root, run_root, keep=(FIXED_ID,))
    for step in rec.steps:  # session ids numbered in the order the steps made them: the first session is ...0001
        for changed in step["new_or_grown_files"]:
            if changed.startswith("projects/") and changed.endswith(".jsonl"):
                norm.uuid(Path(changed).stem)
    slug_dirs = sorted({p.split("/")[1] for p in rec.files if p.startswith("projects/")})
    files = {norm.text(p): norm.jsonl(text) for p, text in rec.files.items()}
    manifest = {
        "version": version,
        "scenario": rec.scenario.name,
        "about": rec.scenario.about,
        "cwd": str(rec.cwd),
        "slug_dirs": slug_dirs,  # beside `cwd`: the pair the slug test compares with ours
        "steps": norm.value(rec.steps),
        "files": {golden_name(p): p for p in sorted(files)},
    }
    return manifest, files


def golden_name(rel: str) -> str:
    """`projects/<slug>/<id>.jsonl` -> `<id>.jsonl` (the slug is in the manifest); deeper parts joined by `__`."""
    parts = rel.split("/")
    return "__".join(parts[2:] if parts[0] == "projects" else parts)


def write_golden(version: str, out: Path, scratch: Path, names: set[str] | None = None) -> list[str]:
    """Record every scenario (or those `names`) into `out/<scenario>/`; the scenario names written."""
    done = []
    for scenario in SCENARIOS:
        if names and scenario.name not in names:
            continue
        manifest, files = normalised(record(scenario, version, scratch / scenario.name), version)
        target = out / scenario.name
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        (target / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", "utf-8")
        for rel, text in files.items():
            dest = target / golden_name(rel)
            dest.write_text(text, encoding="utf-8")
        done.append(scenario.name)
    return done
