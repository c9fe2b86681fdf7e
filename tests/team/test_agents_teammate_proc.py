"""Our teammate as a real process started the way a real `claude` lead starts a teammate of a custom agent type:
only `--agent-type NAME` on its command line; it reads the type from its own cwd's `.claude/agents` and runs on its
prompt, tools (a call outside them refused at execution) and model. Offline, against the scripted server."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from agentteams.model.aliases import resolve_model
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs.atomic_json import now_iso
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.protocol import IdleNotification, ShutdownRequest, parse_message
from tests.support.cli import Cli
from tests.support.team_script import REQUEST_ID, say, tool
from tests.support.wait import wait_until

TEAM = "typed"
MARK = "AUDITOR-PROMPT-PROC"
AUDITOR = f"---\nname: auditor\ndescription: Audits.\ntools: [Read, Glob]\nmodel: haiku\n---\n{MARK}: read only.\n"


def script(victim: Path) -> dict[str, Any]:
    approve = tool("SendMessage", to=LEAD_NAME,
                   message={"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True})  # fmt: skip
    return {"routes": [
        {"name": "stop", "match": {"system": MARK, "last_prompt": "shutdown_request"}, "turns": [approve] * 2},
        {"name": "work", "match": {"system": MARK},
         "turns": [tool("Bash", command=f"touch {victim}"), say("AUDIT-DONE")], "idle": "ready"},
    ]}  # fmt: skip


def idle(lead: Mailbox) -> bool:
    return any(isinstance(parse_message(e.text), IdleNotification) for e in lead.read_all(TEAM, LEAD_NAME))


def test_a_teammate_process_takes_its_type_from_its_own_cwd(cli: Cli, layout: Layout, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".claude" / "agents").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".claude" / "agents" / "auditor.md").write_text(AUDITOR)
    teams = TeamStore(layout)
    teams.create(TEAM, cwd=str(repo))
    teams.add_member(TEAM, NewMember(name="ada", agent_type="auditor", cwd=str(repo)))
    lead = Mailbox(layout)
    lead.send(TEAM, "ada", "ADA-START audit the repository.", sender=LEAD_NAME)
    victim = repo / "ada-was-here.txt"
    with MockServer(script(victim)) as server:
        env = {**cli.env(), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-test-key-0123456789"}
        proc = cli.popen(
            f"--agent-id=ada@{TEAM}", "--agent-name", "ada", "--team-name", TEAM, "--agent-color", "green",
            "--parent-session-id", str(uuid.uuid4()), "--agent-type", "auditor", "--dangerously-skip-permissions",
            env=env, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        wait_until(lambda: idle(lead) or proc.poll() is not None, 30, "ada's first turn")
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        stop = ShutdownRequest(request_id="stop-1", sender=LEAD_NAME, reason="done", timestamp=now_iso())
        lead.send(TEAM, "ada", stop.to_text(), sender=LEAD_NAME)
        assert proc.wait(timeout=30) == 0
        work = [r["body"] for r in server.requests if r.get("route") == "work"]
    assert work, "ada never reached the model with its type's prompt"
    for body in work:
        assert MARK in str(body["system"]) and body["model"] == resolve_model("haiku")
        assert {t["name"] for t in body["tools"]} == {"Read", "Glob", "SendMessage", "TaskCreate", "TaskGet",
                                                      "TaskList", "TaskUpdate"}  # fmt: skip
    results = [b for m in work[-1]["messages"] if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"]  # fmt: skip
    [refused] = results
    assert refused.get("is_error") and "Bash was not run: agent type 'auditor'" in str(refused["content"])
    assert not victim.exists()
