"""Messages from other sessions that the receiver holds (issue 31, item 2), as claude 2.1.332 holds them (seen offline,
tests/interop/test_interop_peers_hold.py): one from a sender of another permission-mode class is put to the person in
the REPL (deny, the default, or deliver) and its sender hears which; one held by `crossSessionInbound: "hold"` is not
asked about, and like any held message nobody answered, its sender hears it expired when the session ends."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.headless import KEY
from tests.support.lead_pane import Start
from tests.support.peer_script import carrying, last_user, say, send
from tests.support.stream_json import STREAM_ARGS
from tests.support.wait import wait_until

QUESTION = "Held message from another session"


def _hold(work: Path) -> None:
    (work / ".claude").mkdir(exist_ok=True)
    (work / ".claude" / "settings.json").write_text(json.dumps({"crossSessionInbound": "hold"}))


def _sender(cli: Cli, cwd: Path, url: str) -> subprocess.Popen[str]:
    env = {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": url, "AGENTTEAMS_NO_WARM": "1"}
    return cli.popen(*STREAM_ARGS, "--dangerously-skip-permissions", "-n", "snd", env=env, cwd=cwd,
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def _named(config_root: Path, name: str) -> bool:
    return any(json.loads(p.read_text()).get("name") == name for p in (config_root / "sessions").glob("*.json"))


def _notices(server: MockServer, words: str) -> list[str]:
    return [t for t in map(last_user, server.requests) if "[Cross-session delivery notice]" in t and words in t]


def _script() -> dict[str, Any]:
    released = {"wait_for": "was released by that session's user", **send("rcv", "PEERMARK two")}
    return {"routes": [
        {"name": "snd", "match": {"tools": True, "first_user": "SENDTO"}, "idle": "snd idle.",
         "turns": [send("rcv", "PEERMARK one"), "snd sent.", released, "snd sent two."]},
        {"name": "rcv", "match": {"tools": True}, "turns": ["rcv read it."], "idle": "rcv idle."},
    ]}  # fmt: skip


def test_a_repl_asks_the_person_and_the_sender_hears_delivered_or_declined(
    start_repl: Start, cli: Cli, work: Path, config_root: Path
) -> None:
    pane, server = start_repl(_script(), "-n", "rcv", "--permission-mode", "default")
    wait_until(lambda: (config_root / "sessions").is_dir() and _named(config_root, "rcv"), 30, "the REPL's record")
    snd = _sender(cli, work, server.base_url)
    try:
        say(snd, "SENDTO rcv")
        pane.wait_text(QUESTION)  # the sender bypasses, the REPL asks: another permission-mode class
        assert "PEERMARK one" in pane.screen() and not carrying(server, "PEERMARK one")
        pane.type("2")
        pane.press("Enter")
        wait_until(lambda: bool(carrying(server, "PEERMARK one")), 30, "the delivered message at the REPL's model")
        wait_until(lambda: bool(_notices(server, "was released")), 30, "the sender told it was delivered")
        pane.wait_text(QUESTION, count=2)  # the second message, sent once the first was let in
        pane.type("1")
        pane.press("Enter")
        wait_until(lambda: bool(_notices(server, "was declined")), 30, "the sender told it was declined")
        assert not carrying(server, "PEERMARK two"), "a declined message never reaches the model"
    finally:
        assert snd.stdin is not None
        snd.stdin.close()
        snd.wait(timeout=30)


def test_a_message_held_by_the_setting_is_not_asked_about_and_expires_with_the_repl(
    start_repl: Start, cli: Cli, work: Path, config_root: Path
) -> None:
    _hold(work)
    pane, server = start_repl(_script(), "-n", "rcv", "--dangerously-skip-permissions")  # the sender's class too
    wait_until(lambda: (config_root / "sessions").is_dir() and _named(config_root, "rcv"), 30, "the REPL's record")
    snd = _sender(cli, work, server.base_url)
    try:
        say(snd, "SENDTO rcv")
        wait_until(lambda: bool(_notices(server, "is held by that session")), 30, "the sender told it is held")
        pane.wait_text("Held a message from")
        assert QUESTION not in pane.screen()
        pane.press("C-d")
        wait_until(lambda: pane.exit_status() is not None, 30, "the REPL to leave")
        wait_until(lambda: bool(_notices(server, "expired")), 30, "the sender told it expired")
        assert not carrying(server, "PEERMARK one")
    finally:
        assert snd.stdin is not None
        snd.stdin.close()
        snd.wait(timeout=30)


def test_a_held_message_nobody_can_be_asked_about_expires_when_its_session_ends(
    cli: Cli, work: Path, config_root: Path
) -> None:
    _hold(work)
    with MockServer(_script()) as server:
        env = {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.base_url, "AGENTTEAMS_NO_WARM": "1"}
        rcv = cli.popen(*STREAM_ARGS, "-n", "rcv", env=env, cwd=work, stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        wait_until(lambda: (config_root / "sessions").is_dir() and _named(config_root, "rcv"), 30, "rcv's record")
        snd = _sender(cli, work, server.base_url)
        say(snd, "SENDTO rcv")
        wait_until(
            lambda: bool(_notices(server, "is held by that session")),
            30,
            "the sender told it is held",
            explain=lambda: "\n".join(f"{r.get('route')}: {last_user(r)[:300]}" for r in server.requests),
        )
        assert rcv.stdin is not None
        rcv.stdin.close()
        rcv.wait(timeout=30)
        wait_until(lambda: bool(_notices(server, "expired")), 30, "the sender told it expired")
        assert not carrying(server, "PEERMARK one")
        assert snd.stdin is not None
        snd.stdin.close()
        snd.wait(timeout=30)
