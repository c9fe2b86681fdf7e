"""Interop tier, hooks: the real Claude Code CLI and ours run the same project settings' hooks (a real script
logging what it is given) against the same scripted conversation; the payloads carry the same keys."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.hookscript import HookLab
from tests.test_e2e_headless import KEY, agentteams

pytestmark = pytest.mark.timeout(120)

EVENTS = {"PreToolUse": "Bash", "PostToolUse": "Bash", "UserPromptSubmit": "", "Stop": "", "SessionEnd": ""}
# every event here must carry the same keys, but for `effort` (the real CLI's reasoning effort level: agentteams
# has none, and a made-up value would mislead a hook)
NOT_OURS = {"effort"}


def conversation() -> dict[str, Any]:
    turns = [{"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "echo HOOKED"}}]}, "done"]
    return {"routes": [rc.main_route("main", "HOOKMARK", turns)]}


def project(root: Path, lab: HookLab) -> Path:
    proj = root / "proj"
    (proj / ".claude").mkdir(parents=True)
    (proj / ".claude" / "settings.json").write_text(json.dumps({"hooks": lab.settings(EVENTS)}))
    return proj


def keys_by_event(lab: HookLab) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for entry in lab.entries():
        out.setdefault(entry["event"], set()).update(entry["payload"])
    return out


def test_both_clis_give_hooks_the_same_payload_keys(
    claude: Path, claude_version: str, cli: Cli, config_root: Path, tmp_path: Path
) -> None:
    theirs_lab, ours_lab = HookLab(tmp_path / "theirs-lab"), HookLab(tmp_path / "ours-lab")
    theirs_proj, ours_proj = project(tmp_path / "theirs", theirs_lab), project(tmp_path / "ours", ours_lab)
    claude_home = tmp_path / "claude-config"
    rc.seed_home(claude_home, [theirs_proj], claude_version)
    with MockServer(conversation()) as server:
        proc = subprocess.run(
            [str(claude), "-p", "HOOKMARK go", "--allowedTools", "Bash"], cwd=theirs_proj,
            env=rc.claude_env(claude_home, server.base_url), capture_output=True, text=True, timeout=90, check=False,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with MockServer(conversation()) as server:
        ours = agentteams(cli, ours_proj, "-p", "HOOKMARK go", "--allowedTools", "Bash", base_url=server.base_url)
    assert ours.returncode == 0, ours.stderr
    theirs_keys, ours_keys = keys_by_event(theirs_lab), keys_by_event(ours_lab)
    assert sorted(theirs_keys) == sorted(EVENTS), f"the real claude ran hooks for {sorted(theirs_keys)}"
    for event, keys in theirs_keys.items():
        assert ours_keys.get(event) == keys - NOT_OURS, f"{event}: ours {ours_keys.get(event)}, theirs {keys}"
    for entry in ours_lab.entries():  # ours go past theirs here: no credential in a hook's environment
        assert KEY not in entry["raw"] and entry["key_vars"] == []
    [theirs_pre], [ours_pre] = theirs_lab.entries("PreToolUse"), ours_lab.entries("PreToolUse")
    assert theirs_pre["payload"]["tool_input"] == ours_pre["payload"]["tool_input"] == {"command": "echo HOOKED"}
    [theirs_post], [ours_post] = theirs_lab.entries("PostToolUse"), ours_lab.entries("PostToolUse")
    theirs_response, ours_response = theirs_post["payload"]["tool_response"], ours_post["payload"]["tool_response"]
    assert sorted(ours_response) == sorted(theirs_response)  # Bash's result as hook scripts read it
    assert ours_response["stdout"].strip() == theirs_response["stdout"].strip() == "HOOKED"
