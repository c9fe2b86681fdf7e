"""A real hook script for end-to-end tests: it logs each payload (with what its environment held) and answers
by rules (exit code, stderr, stdout or JSON) that a test writes as JSON beside it."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

SCRIPT = r"""
import json, os, sys, time
event, log, rules = sys.argv[1], sys.argv[2], sys.argv[3]
raw = sys.stdin.read()
keys = [k for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN") if k in os.environ]
# when this process was made (its start in /proc, in clock ticks since boot): the moment the CLI ran the hook, before
# this interpreter's own start-up, which a loaded machine can stretch to a second
ticks = int(open("/proc/self/stat").read().rpartition(")")[2].split()[19])
spawned = time.time() - (time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK"))
entry = {"event": event, "payload": json.loads(raw), "raw": raw, "key_vars": keys, "t": time.time(), "spawned": spawned,
         "project_dir": os.environ.get("CLAUDE_PROJECT_DIR"), "cwd": os.getcwd()}
with open(log, "a") as f:
    f.write(json.dumps(entry) + "\n")
for rule in json.load(open(rules)):
    if rule["event"] != event or rule.get("when", "") not in raw:
        continue
    once = rule.get("once")
    if once:
        mark = os.path.join(os.path.dirname(log), "once-" + once)
        if os.path.exists(mark):
            continue
        open(mark, "w").close()
    if "stderr" in rule:
        sys.stderr.write(rule["stderr"])
    if "stdout" in rule:
        out = rule["stdout"]
        sys.stdout.write(out if isinstance(out, str) else json.dumps(out))
    sys.exit(rule.get("exit", 0))
"""


class HookLab:
    """The script, its rules and its log in `root`; `settings(...)` gives a settings file's `hooks` value."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.script, self.log, self.rules = root / "hook.py", root / "hooks.log", root / "rules.json"
        self.script.write_text(SCRIPT)
        self.rules.write_text("[]")

    def command(self, event: str) -> str:
        return shlex.join([sys.executable, str(self.script), event, str(self.log), str(self.rules)])

    def settings(self, events: dict[str, str], timeouts: dict[str, float] | None = None) -> dict[str, Any]:
        """{event: matcher} -> the `hooks` object running this script for each."""
        out: dict[str, Any] = {}
        for event, matcher in events.items():
            hook: dict[str, Any] = {"type": "command", "command": self.command(event)}
            if timeouts and event in timeouts:
                hook["timeout"] = timeouts[event]
            out[event] = [{"matcher": matcher, "hooks": [hook]}]
        return out

    def answer(self, *rules: dict[str, Any]) -> None:
        self.rules.write_text(json.dumps(list(rules)))

    def entries(self, event: str | None = None) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        # whole lines only: a hook still appending its line is read on the next look, not half (seen in CI)
        *whole, _partial = self.log.read_text().split("\n")
        found = [json.loads(line) for line in whole if line.strip()]
        return [e for e in found if event is None or e["event"] == event]
