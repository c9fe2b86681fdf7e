"""Messages between independent sessions of ours (issue 31, item 2), as real processes against the scripted server: a
message reaches the receiver's model (idle: a turn of its own; busy: after its next tool result), and a refusing
receiver's sender is told so; each session's `sessions/<pid>.json` is claude's record."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agentteams.mockapi import MockServer
from agentteams.mockapi.reqtext import content_text
from tests.support.cli import Cli
from tests.support.headless import KEY
from tests.support.peer_script import carrying, last_user, routes, say, send, session_record
from tests.support.stream_json import STREAM_ARGS
from tests.support.wait import wait_until

pytestmark = pytest.mark.proc


def _session(cli: Cli, cwd: Path, url: str, name: str) -> subprocess.Popen[str]:
    env = {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": url, "AGENTTEAMS_NO_WARM": "1"}
    return cli.popen(*STREAM_ARGS, "--dangerously-skip-permissions", "-n", name, env=env, cwd=cwd,
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def test_a_message_reaches_an_idle_session_of_ours(cli: Cli, work: Path, config_root: Path) -> None:
    script = routes(["rcv read it."], [send("rcv", "PEERMARK hello from snd"), "snd sent."])
    with MockServer(script) as server:
        rcv = _session(cli, work, server.base_url, "rcv")
        wait_until(lambda: session_record(config_root, "rcv") is not None, 30, "the receiver's sessions record")
        record = session_record(config_root, "rcv")
        assert record is not None
        assert (record["peerProtocol"], record["kind"], record["entrypoint"]) == (1, "interactive", "sdk-cli")
        assert record["messagingSocketPath"].endswith(f"/{record['pid']}.sock")
        snd = _session(cli, work, server.base_url, "snd")
        say(snd, "SENDTO rcv")
        wait_until(lambda: bool(carrying(server, "PEERMARK hello")), 30, "the message in the receiver's request")
        got = last_user(carrying(server, "PEERMARK hello")[0])
        assert '<cross-session-message from="uds:' in got and 'from-name="snd" from-mode="bypass"' in got
        # the sender's next request and the receiver's turn race: each is awaited
        wait_until(lambda: any("rcv [" not in last_user(r) and '"success":true' in last_user(r)
                               for r in server.requests), 30, "the sender's result saying it was sent")  # fmt: skip
        for proc in (rcv, snd):
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=30)
        assert session_record(config_root, "rcv") is None, "a session that ended takes its record away"


def test_a_busy_session_of_ours_gets_it_at_its_next_tool_result(
    cli: Cli, work: Path, config_root: Path, tmp_path: Path
) -> None:  # fmt: skip
    gate = tmp_path / "gate"
    wait = {"content": [{"type": "tool_use", "name": "Bash", "input": {
        "command": f"while [ ! -e {gate} ]; do sleep 0.05; done; echo opened", "description": "wait"}}]}  # fmt: skip
    script = routes([wait, {"wait_for": "PEERMARK busy", "text": "rcv read it."}],
                     [send("rcv", "PEERMARK busy one"), "snd sent."])  # fmt: skip
    with MockServer(script) as server:
        rcv = _session(cli, work, server.base_url, "rcv")
        say(rcv, "RCVWORK")
        wait_until(lambda: (session_record(config_root, "rcv") or {}).get("status") == "busy", 30, "the receiver busy")
        wait_until(lambda: any(r.get("route") == "rcv" for r in server.requests), 30, "the receiver's Bash call")
        snd = _session(cli, work, server.base_url, "snd")
        say(snd, "SENDTO rcv")
        wait_until(lambda: any('"success":true' in last_user(r) for r in server.requests), 30, "the send's result")
        assert not carrying(server, "PEERMARK busy"), "nothing reaches the receiver before its tool is done"
        gate.touch()
        wait_until(lambda: bool(carrying(server, "PEERMARK busy one")), 30, "the message after the tool result")
        last = carrying(server, "PEERMARK busy one")[0]["body"]["messages"][-1]["content"]
        kinds = [b.get("type") for b in last]
        assert kinds[0] == "tool_result" and "opened" in content_text([last[0]]), kinds
        assert any(b.get("type") == "text" and "PEERMARK busy one" in b.get("text", "") for b in last[1:])
        for proc in (rcv, snd):
            assert proc.stdin is not None
            proc.stdin.close()


def test_a_refusing_session_tells_the_sender(cli: Cli, work: Path, config_root: Path) -> None:
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(json.dumps({"crossSessionInbound": "refuse"}))
    notice = {"wait_for": "Cross-session delivery notice", "text": "snd heard the refusal."}
    script = routes(["rcv read it."], [send("rcv", "PEERMARK refused"), "snd sent.", notice])
    with MockServer(script) as server:
        rcv = _session(cli, work, server.base_url, "rcv")
        wait_until(lambda: session_record(config_root, "rcv") is not None, 30, "the receiver's sessions record")
        snd = _session(cli, work, server.base_url, "snd")
        say(snd, "SENDTO rcv")
        wait_until(lambda: bool(carrying(server, "[Cross-session delivery notice]")), 30, "the sender told")
        told = last_user(carrying(server, "[Cross-session delivery notice]")[0])
        assert "refused" in told
        assert not any("PEERMARK refused" in last_user(r) and "cross-session-message" in last_user(r)
                       for r in server.requests), "the refused message never reaches the receiver's model"  # fmt: skip
        for proc in (rcv, snd):
            assert proc.stdin is not None
            proc.stdin.close()


def test_a_held_messages_line_on_a_print_runs_stderr_is_inert(cli: Cli, work: Path, config_root: Path) -> None:
    """-p has no screen of its own for the notice: it is a warning line on stderr, where the sender's words must
    not reach the terminal as escape sequences (a title, the clipboard)."""
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(json.dumps({"crossSessionInbound": "hold"}))
    hostile = "PEERMARK held \x1b]0;PWNED\x07\x1b]52;c;ZXZpbA==\x07 end"
    script = routes(["rcv read it."], [send("rcv", hostile), "snd sent."])
    with MockServer(script) as server:
        rcv = _session(cli, work, server.base_url, "rcv")
        wait_until(lambda: session_record(config_root, "rcv") is not None, 30, "the receiver's sessions record")
        snd = _session(cli, work, server.base_url, "snd")
        say(snd, "SENDTO rcv")
        wait_until(lambda: any('"success":true' in last_user(r) for r in server.requests), 30, "the send's result")
        for proc in (snd, rcv):
            assert proc.stdin is not None
            proc.stdin.close()
        for proc in (snd, rcv):
            proc.wait(timeout=30)
        assert rcv.stderr is not None
        err = rcv.stderr.read()
    [line] = [x for x in err.splitlines() if "Held a message" in x]
    assert "PEERMARK held ^[]0;PWNED^G^[]52;c;ZXZpbA==^G end" in line and "\x1b" not in err and "\x07" not in err
