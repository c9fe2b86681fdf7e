"""Interop tier, basics: the real Claude Code CLI offline against our mock API, and as a teammate of our stores.

Needs the real CLI (.ci/run installs it; see tests/support/realclaude.py) and tmux. Never skipped.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from agentteams.backends.tmux import TmuxBackend
from agentteams.mockapi import MockServer
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs.atomic_json import now_iso
from agentteams.store.paths import Layout
from agentteams.store.protocol import IdleNotification, ShutdownApproved, ShutdownRequest, parse_message
from agentteams.store.records import Envelope
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.procs import find_process, pid_alive
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

pytestmark = pytest.mark.timeout(90)

TEAMMATE_MODEL = "claude-sonnet-4-6"


def start_mock(servers: list[MockServer], script: dict[str, Any], log: Path) -> MockServer:
    server = MockServer(script, log_path=log).start()
    servers.append(server)
    return server


def posts(server: MockServer) -> list[dict[str, Any]]:
    return [r for r in server.requests if r["method"] == "POST"]


def test_claude_binary_is_the_pinned_version(claude: Path, claude_version: str) -> None:
    out = subprocess.run([str(claude), "--version"], capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout.strip() == f"{claude_version} (Claude Code)"


def test_mock_answers_structured_output_side_requests_with_schema_json(
    servers: list[MockServer], tmp_path: Path
) -> None:
    """The real CLI's title request asks for a JSON schema; an unscripted answer must fit it."""
    server = start_mock(servers, {"routes": [rc.main_route("main", "MARK", ["scripted"])]}, tmp_path / "req.jsonl")
    schema = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
    body = {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "MARK"}], "tools": [],
            "output_config": {"format": {"type": "json_schema", "schema": schema}}}  # fmt: skip
    req = urllib.request.Request(server.base_url + "/v1/messages?beta=true", json.dumps(body).encode(), method="POST")
    req.add_header("content-type", "application/json")
    with urllib.request.urlopen(req, timeout=10) as resp:
        reply = json.loads(resp.read())
    assert json.loads(reply["content"][0]["text"]) == {"title": "mock title"}
    assert server.requests[-1]["route"] is None  # no tools: the side request stayed off the main route


def test_print_mode_returns_the_scripted_text(
    claude: Path, claude_version: str, servers: list[MockServer], config_root: Path, proj: Path, tmp_path: Path
) -> None:
    script = {"routes": [rc.main_route("main", "PRINTMARK", ["INTEROP-OK scripted answer"])]}
    server = start_mock(servers, script, tmp_path / "req.jsonl")
    rc.seed_home(config_root, [proj], claude_version)
    env = rc.claude_env(config_root, server.base_url)
    started = time.time()
    proc = subprocess.run(
        [str(claude), "-p", "PRINTMARK say the word"], cwd=proj, env=env, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "INTEROP-OK scripted answer" in proc.stdout
    main = [r for r in posts(server) if r["route"] == "main"]
    assert len(main) == 1 and main[0]["path"] == "/v1/messages?beta=true"
    assert main[0]["headers"]["x-api-key"] == "<redacted>"
    assert main[0]["headers"]["user-agent"].startswith(f"claude-cli/{claude_version} ")
    print(f"\n[interop] claude -p: first model request {main[0]['ts'] - started:.2f}s after start, "
          f"exit {time.time() - started:.2f}s")  # fmt: skip


def latest(mailbox: Mailbox, team: str, kind: type[Any], sender: str) -> tuple[Envelope, Any] | None:
    """The last message of protocol type `kind` from `sender` in the lead's inbox."""
    hits = [(e, m) for e in mailbox.read_live(team, "team-lead") if isinstance(m := parse_message(e.text), kind)]
    hits = [(e, m) for e, m in hits if e.sender == sender]
    return hits[-1] if hits else None


def active(teams: TeamStore, team: str, name: str) -> bool | None:
    member = teams.read(team).member(name)
    return member.is_active if member is not None else None


def test_real_claude_as_our_teammate_replies_idles_and_shuts_down(
    claude: Path,
    claude_version: str,
    servers: list[MockServer],
    tmux: Tmux,
    layout: Layout,
    config_root: Path,
    proj: Path,
    tmp_path: Path,
) -> None:
    script = {"routes": [rc.main_route("alice", "ALICEMARK", [
        rc.send_message_turn("team-lead", "ALICE-REPLY hello lead", summary="hello"),
        "alice: replied",
        rc.approve_shutdown_turn(),
        "alice: bye",
    ], idle="alice idle")]}  # fmt: skip
    server = start_mock(servers, script, tmp_path / "req.jsonl")
    rc.seed_home(config_root, [proj], claude_version)
    env = rc.claude_env(config_root, server.base_url)

    teams, mailbox = TeamStore(layout), Mailbox(layout)
    lead_session = str(uuid.uuid4())
    team = teams.create("interop team", lead_session_id=lead_session, cwd=str(proj)).name
    teams.add_member(team, NewMember(name="alice", color="blue", model=TEAMMATE_MODEL, prompt="ALICEMARK",
                                     cwd=str(proj), backend_type="tmux"))  # fmt: skip
    mailbox.send(team, "alice", "ALICEMARK You are alice. Greet the lead.", sender="team-lead")

    # the API key lives only in the tmux server's environment; the pane's command line carries none
    lead_pane = tmux.start(env, proj, ["cat"], session="lead")
    argv = [str(claude), "--agent-id", f"alice@{team}", "--agent-name", "alice", "--team-name", team,
            "--agent-color", "blue", "--parent-session-id", lead_session, "--dangerously-skip-permissions",
            "--model", TEAMMATE_MODEL]  # fmt: skip
    forwarded = {"CLAUDECODE": "1", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1",
                 "ANTHROPIC_BASE_URL": server.base_url, "CLAUDE_CONFIG_DIR": str(config_root)}  # fmt: skip
    started = time.time()
    pane = TmuxBackend(str(tmux.sock)).spawn_pane(lead_pane, "alice", "blue", argv, proj, forwarded)
    teams.set_member_fields(team, "alice", tmux_pane_id=pane)
    pane_pid = tmux.panes()[pane].pid
    assert pane_pid is not None
    wait_until(lambda: find_process(pane_pid, "--agent-name") is not None, 10, "the claude process", interval=rc.POLL)
    pid = find_process(pane_pid, "--agent-name")
    assert pid is not None
    rss = rc.PeakRss(pid)

    def reply() -> Envelope | None:
        return next((e for e in mailbox.read_live(team, "team-lead") if "ALICE-REPLY" in e.text), None)

    t_reply = wait_until(lambda: reply() is not None, 40, "alice's reply in the lead's inbox", interval=rc.POLL)
    got = reply()
    assert got is not None
    assert (got.sender, got.text, got.summary, got.color) == ("alice", "ALICE-REPLY hello lead", "hello", "blue")
    wait_until(
        lambda: latest(mailbox, team, IdleNotification, "alice") is not None,
        30,
        "an idle_notification",
        interval=rc.POLL,
    )
    idle = latest(mailbox, team, IdleNotification, "alice")
    assert idle is not None and idle[1].idle_reason == "available"
    # 2.1.330 adds the turn's final text as `result`
    result = "alice: replied" if ccv.TRAITS[claude_version].result_in_idle else None
    assert json.loads(idle[0].text).get("result") == result, idle[0].text
    assert mailbox.read_live(team, "alice") == []  # the CLI prunes what it delivered rather than marking it read
    wait_until(lambda: active(teams, team, "alice") is False, 10, "alice to mark herself inactive", interval=rc.POLL)

    request = ShutdownRequest(request_id=ShutdownRequest.new_request_id("alice"), sender="team-lead",
                              timestamp=now_iso())  # fmt: skip
    mailbox.send(team, "alice", request.to_text(), sender="team-lead")
    asked = time.time()
    wait_until(
        lambda: latest(mailbox, team, ShutdownApproved, "alice") is not None, 30, "shutdown_approved", interval=rc.POLL
    )
    approved = latest(mailbox, team, ShutdownApproved, "alice")
    assert approved is not None
    assert approved[1].request_id == request.request_id
    # paneId and backendType are optional in the CLI's schema: it copies both from its member entry, and leaves both
    # out when its own lock-free read of config.json fails. 2.1.330 rewrites that file in place (open r+, write,
    # truncate) as it marks itself active at the start of this very turn, so under load that read can tear
    assert (approved[1].pane_id, approved[1].backend_type) in ((pane, "tmux"), ("", None)), approved[0].text
    t_exit = wait_until(
        lambda: tmux.exited_ok(pane), 20, "the teammate to exit with status 0", interval=rc.POLL,
        explain=lambda: f"pane {tmux.panes().get(pane)}, alive {pid_alive(pid)}:\n{tmux.capture(pane)}",
    )  # fmt: skip
    wait_until(lambda: not pid_alive(pid), 10, "the claude process to be gone", interval=rc.POLL)
    peak = rss.stop()

    main = [r for r in posts(server) if r["route"] == "alice"]
    # idle answers (turn None) may come between: a slow-starting CLI can deliver its first prompt twice; and
    # after approving a shutdown the process may exit before asking for turn 3
    assert [r["turn"] for r in main if r["turn"] is not None][:3] == [0, 1, 2]
    assert all(r["body"]["model"] == TEAMMATE_MODEL for r in main)
    first_user = main[0]["body"]["messages"][0]["content"]
    assert any('<teammate-message teammate_id="team-lead">' in b.get("text", "") for b in first_user)
    sides = [r for r in posts(server) if r["route"] is None]
    for side in sides:  # title generation and the like: answered by the fallback, never by alice's route
        assert not side["body"].get("tools")
    print(f"\n[interop] teammate: first request {posts(server)[0]['ts'] - started:.2f}s after spawn, first main "
          f"request {main[0]['ts'] - started:.2f}s, reply in inbox {t_reply:.2f}s, shutdown_request to exit "
          f"{time.time() - asked:.2f}s (pane gone {t_exit:.2f}s), peak RSS {peak / 1024:.0f} MiB, "
          f"{len(sides)} side request(s)")  # fmt: skip
