"""Interop tier, formats: a real Claude Code teammate reads what our stores write, in a team laid out as a real
2.1.330 lead lays one out (its config carries `leadProcess`, REPORT-2.1.330 §2).

Our TeamStore creates the team as such a lead would (its shape checked against the 2.1.330 golden, this process as
the lead in `leadProcess`), adds teammate `bob`, then his pane; every inbox entry is written by our `agentteams`
CLI, each in a process of its own: his prompt, plain messages (one with a summary, one with characters JSON has to
escape), a task and its task_assignment (`task create`, `task update --owner`), and a shutdown_request from
team-lead. The real CLI runs as `bob` in a tmux pane, offline against our mock. Its model must get every message
(2.1.330 drops, and prunes from the file, any entry its stricter schema refuses), it must read and update the task
our store wrote, approve the shutdown and exit 0, and the config must keep its `leadProcess` through our writes and
the CLI's own.

Against both pinned versions: a 2.1.197 teammate reads the same files (with a laxer schema, and a `leadProcess`
it has never heard of), as it would under a lead upgraded before it. Never skipped.
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.mockapi.reqtext import content_text
from agentteams.pids import LeadProcess
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs.atomic_json import epoch_ms, now_iso
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.protocol import ShutdownApproved, ShutdownRequest, parse_message
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.procs import cmdline, find_process, pid_alive
from tests.support.repo import TESTS
from tests.support.team_script import say, tool
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

pytestmark = pytest.mark.timeout(120)

GOLDEN_330 = TESTS / "golden-2.1.330"  # what the real 2.1.330 wrote
REAL_TEAMMATE_SYSTEM = "# Agent Teammate Communication"  # a section only a real teammate's system prompt has
PROMPT = "FMT-PROMPT You are bob. Say hi, then wait for the lead."
TASK_SUBJECT = "FMT-TASK-SUBJECT write the parser"
TASK_DESCRIPTION = "FMT-TASK-DESCRIPTION parse the input, then report"
# (marker, text, summary): what the lead sends after bob's first turn
MESSAGES = [
    ("FMT-PLAIN", "FMT-PLAIN a plain message from the lead", None),
    ("FMT-SUMMARY", "FMT-SUMMARY please report your status", "status please"),
    ("FMT-ESCAPES", 'FMT-ESCAPES naïve — ✓ "quoted" \\back\\slash\ttab\nsecond line </tag> 😀', "ünïcode ✓"),
]


def lead_process_of_this_process() -> dict[str, Any]:
    """`leadProcess` for this process as a 2.1.330 lead computes it on Linux (REPORT-2.1.330 §2), worked out here
    independently of our store: `claimedAt` aside, what the config must say."""
    stat = Path(f"/proc/{os.getpid()}/stat").read_text()
    return {
        "pid": os.getpid(),
        "pidSpace": f"{socket.gethostname()}#{os.readlink('/proc/self/ns/pid')}",
        "procStart": stat.rsplit(")", 1)[1].split()[19],  # field 22, starttime
    }


def create_team_as_a_2_1_330_lead(teams: TeamStore, proj: Path) -> tuple[str, str, dict[str, Any]]:
    """The session team a 2.1.330 lead creates at start-up, made by our store with this process as its lead:
    name, config shape and `leadProcess` as that lead's (tests/golden-2.1.330/team_config_initial.json)."""
    session = str(uuid.uuid4())
    lead = LeadProcess.for_this_process(epoch_ms())
    created = teams.create(f"session-{session[:8]}", lead_session_id=session, cwd=str(proj), lead_pane_id="leader",
                           lead_backend_type="in-process", lead_process=lead)  # fmt: skip
    config = json.loads(teams.layout.config_file(created.name).read_text(encoding="utf-8"))
    golden = json.loads((GOLDEN_330 / "team_config_initial.json").read_text(encoding="utf-8"))
    assert (list(config), list(config["members"][0])) == (list(golden), list(golden["members"][0])), config
    written = config["leadProcess"]
    assert {k: written[k] for k in ("pid", "pidSpace", "procStart")} == lead_process_of_this_process(), written
    assert list(written) == list(golden["leadProcess"]), written
    return created.name, session, config


def scenario() -> dict[str, Any]:
    me = {"system": REAL_TEAMMATE_SYSTEM, "tools": True}
    return {"routes": [
        {"name": "bob-shutdown", "match": {**me, "last_prompt": "shutdown_request"},
         "turns": [rc.approve_shutdown_turn(), say("bob: bye")]},
        {"name": "bob-task", "match": {**me, "last_prompt": TASK_SUBJECT},
         "turns": [tool("TaskGet", taskId="1"), tool("TaskUpdate", taskId="1", status="in_progress"),
                   say("bob: on it")]},
        {"name": "bob", "match": me, "turns": [say("bob: hi")], "idle": "bob: noted"},
    ]}  # fmt: skip


def user_texts(requests: list[dict[str, Any]]) -> list[str]:
    return [content_text(m.get("content")) for r in requests for m in r["body"]["messages"] if m["role"] == "user"]


def from_lead(requests: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(opening tag, body) of every `<teammate-message teammate_id="team-lead" ...>` block bob's model got."""
    block = re.compile(r'(<teammate-message teammate_id="team-lead"[^>]*>)\n(.*?)\n</teammate-message>', re.S)
    return [(m.group(1), m.group(2)) for t in user_texts(requests) for m in block.finditer(t)]


def tool_results(requests: list[dict[str, Any]], tool_name: str) -> list[str]:
    """What bob's calls of `tool_name` returned, as his model got it."""
    messages = [m for r in requests for m in r["body"]["messages"] if isinstance(m.get("content"), list)]
    blocks = [b for m in messages for b in m["content"] if isinstance(b, dict)]
    ids = {b["id"] for b in blocks if b.get("type") == "tool_use" and b.get("name") == tool_name}
    found = {b["tool_use_id"]: content_text(b.get("content")) for b in blocks
             if b.get("type") == "tool_result" and b.get("tool_use_id") in ids}  # fmt: skip
    return list(found.values())


def test_a_real_teammate_takes_everything_our_stores_write(
    claude: Path, claude_version: str, cli: Cli, tmux: Tmux, layout: Layout, config_root: Path, tmp_path: Path
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    teams, mailbox = TeamStore(layout), Mailbox(layout)
    team, session, written = create_team_as_a_2_1_330_lead(teams, proj)
    model = ccv.TRAITS[claude_version].default_model  # a real lead passes its own
    teams.add_member(team, NewMember(name="bob", color="green", model=model, prompt=PROMPT, cwd=str(proj),
                                     backend_type="tmux"))  # fmt: skip

    def send(*args: str) -> None:
        done = cli(*args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)

    send("msg", "send", team, "bob", PROMPT)  # before the start, as a lead writes the prompt
    with MockServer(scenario(), log_path=tmp_path / "req.jsonl") as server:
        rc.seed_home(config_root, [proj], claude_version)
        # CLAUDECODE as a lead sets it; the task tools on, as bob calls TaskGet and TaskUpdate (2.1.330: off by default)
        env = rc.claude_env(config_root, server.base_url, extra={"CLAUDECODE": "1", **ccv.TASK_TOOLS_ON})
        argv = [str(claude), "--agent-id", f"bob@{team}", "--agent-name", "bob", "--team-name", team,
                "--agent-color", "green", "--parent-session-id", session, "--dangerously-skip-permissions",
                "--model", model]  # fmt: skip
        pane = tmux.start(env, proj, argv, session="bob", options={"remain-on-exit": "on"})
        teams.set_member_fields(team, "bob", tmux_pane_id=pane)  # ours, over the lead's config
        pane_pid = tmux.panes()[pane].pid
        assert pane_pid is not None

        def bob() -> list[dict[str, Any]]:
            return [r for r in server.requests if str(r.get("route") or "").startswith("bob")]

        def explain() -> str:
            routes = [(r.get("route"), r.get("turn")) for r in server.arrivals]
            files = "".join(f"--- {f.relative_to(config_root)}:\n{f.read_text(errors='replace')}\n"
                            for f in sorted((config_root / "teams").rglob("*.json")))  # fmt: skip
            return f"routes so far: {routes}\n{files}--- bob's pane:\n{tmux.capture(pane, scrollback=True)}"

        def seen(marker: str) -> bool:
            return any(marker in body for _, body in from_lead(bob()))

        def watch(cond: Any, timeout: float, what: str) -> float:
            return wait_until(cond, timeout, what, interval=rc.POLL, explain=explain)

        t_first = watch(lambda: seen("FMT-PROMPT"), 40, "bob's model to get his prompt")
        watch(lambda: find_process(pane_pid, "--agent-name") is not None, 10, "bob's claude process")
        pid = find_process(pane_pid, "--agent-name")
        assert pid is not None and cmdline(pid)[-1] == model
        started = time.monotonic()
        for _, text, summary in MESSAGES:
            send("msg", "send", team, "bob", text, *(["--summary", summary] if summary else []))
        send("task", "create", team, TASK_SUBJECT, "-d", TASK_DESCRIPTION)
        send("task", "update", team, "1", "--owner", "bob")  # our TaskStore sends the task_assignment
        markers = [m for m, _, _ in MESSAGES]
        watch(lambda: all(map(seen, markers)) and any(r["turn"] == 2 for r in bob() if r["route"] == "bob-task"), 60,
              "bob's model to get every message and finish the task turn")  # fmt: skip
        request = ShutdownRequest(request_id=ShutdownRequest.new_request_id("bob"), sender=LEAD_NAME,
                                  timestamp=now_iso(), reason="FMT-STOP")  # fmt: skip
        send("msg", "send", team, "bob", request.to_text())

        def approved() -> ShutdownApproved | None:
            found = [m for e in mailbox.read_live(team, LEAD_NAME) if e.sender == "bob"
                     and isinstance(m := parse_message(e.text), ShutdownApproved)]  # fmt: skip
            return found[-1] if found else None

        watch(lambda: approved() is not None, 30, "bob's shutdown_approved in the lead's inbox")
        watch(lambda: tmux.exit_status(pane) is not None, 20, "bob's process to exit")
        assert tmux.exit_status(pane) == 0, explain()
        t_all = time.monotonic() - started
        assert not pid_alive(pid)
        requests = bob()
        lead_inbox = mailbox.read_live(team, LEAD_NAME)

    got = set(from_lead(requests))  # each request carries the conversation so far
    bodies = {body for _, body in got}
    # every message reached bob's model whole: the text exactly as we wrote it, under the lead's name
    for marker, text, summary in MESSAGES:
        assert [body for body in bodies if marker in body] == [text], (marker, got)
        with_summary = f' summary="{summary}"' if summary else ""  # the summary as we wrote it, or none
        tags = {tag for tag, body in got if body == text}
        assert tags == {f'<teammate-message teammate_id="team-lead"{with_summary}>'}, tags
    assert PROMPT in bodies, got
    # the task_assignment as our TaskStore wrote it, and the task file itself: bob read it, then updated it
    # (2.1.330 follows a shutdown_request it verified, or got with no key held, with its own instructions)
    kinds = [json.JSONDecoder().raw_decode(body)[0] for body in bodies if body.startswith("{")]
    assignment = [k for k in kinds if k.get("type") == "task_assignment"]
    assert len(assignment) == 1 and (assignment[0]["taskId"], assignment[0]["subject"]) == ("1", TASK_SUBJECT), kinds
    read = tool_results(requests, "TaskGet")
    assert len(read) == 1 and TASK_SUBJECT in read[0] and TASK_DESCRIPTION in read[0], read
    task = TaskStore(layout, mailbox).get(team, "1")
    assert (task.status, task.owner) == ("in_progress", "bob")
    # the shutdown: his model got our request, he approved it by its id and exited 0
    assert [k["requestId"] for k in kinds if k.get("type") == "shutdown_request"] == [request.request_id], kinds
    stops = [m for e in lead_inbox if isinstance(m := parse_message(e.text), ShutdownApproved)]
    assert [m.request_id for m in stops] == [request.request_id], lead_inbox
    assert mailbox.read_live(team, "bob") == []  # the CLI prunes what it delivered (and what its schema refuses)
    # the config: still the lead's leadProcess, after our two writes and bob's own (isActive)
    config = json.loads(layout.config_file(team).read_text(encoding="utf-8"))
    assert config["leadProcess"] == written["leadProcess"], config
    member = next(m for m in config["members"] if m["name"] == "bob")
    assert (member["tmuxPaneId"], member["backendType"], "isActive" in member) == (pane, "tmux", True), member
    print(f"\n[interop] formats: bob's prompt reached his model {t_first:.2f}s after start; messages, task and "
          f"shutdown to exit {t_all:.2f}s; {len(requests)} request(s) of his")  # fmt: skip
