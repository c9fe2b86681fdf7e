"""`agentteams doctor` as a real process: each check's line and fix, exit status, --json, and no key ever shown."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.cli import Cli

KEY = "sk-ant-QzXwVkJmPqRtYsHgFdLb"  # distinctive: any 6 characters of it in the output would be a leak
CHECKS = ["install", "tmux", "session", "config dir", "settings", "api key", "api url", "claude", "inotify", "warm -p"]


class Api:
    """A local HTTP server standing in for the API: answers anything with 404 and records request headers."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self) -> None:
                api.requests.append((self.command, dict(self.headers)))
                self.send_response(404)
                self.end_headers()

            do_GET = do_POST = do_HEAD

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    server = Api()
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "AGENTTEAMS_WATCH", "AGENTTEAMS_TMUX_SOCKET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    yield server
    server.close()


def lines_by_check(stdout: str) -> dict[str, str]:
    """`fail  api key     ...` -> {"api key": "fail  api key     ..."}."""
    out = {}
    for line in stdout.splitlines():
        for name in CHECKS:
            if line[6:].startswith(name + " "):
                out[name] = line
    return out


def fake_bin(tmp_path: Path, **programs: str) -> str:
    """A directory holding shell scripts that print the given first line; for PATH."""
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    for name, output in programs.items():
        script = d / name
        script.write_text(f"#!/bin/sh\necho '{output}'\n")
        script.chmod(0o755)
    return str(d)


def test_no_key_fails_with_the_fix(cli: Cli, config_root: Path, api: Api) -> None:
    proc = cli("doctor")
    assert proc.returncode == 1
    lines = lines_by_check(proc.stdout)
    assert list(lines) == CHECKS, proc.stdout
    assert lines["api key"].startswith("fail  api key")
    assert "fix: export ANTHROPIC_API_KEY=" in lines["api key"]
    assert lines["api url"].startswith("ok    api url") and "(HTTP 404)" in lines["api url"]
    assert lines["config dir"].startswith("ok    config dir") and str(config_root) in lines["config dir"]


def test_the_key_is_never_shown_nor_sent(cli: Cli, api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    plain = cli("doctor")
    as_json = cli("doctor", "--json")
    assert plain.returncode == 0, plain.stdout  # nothing fails here: tmux, claude at worst warn
    assert lines_by_check(plain.stdout)["api key"].startswith("ok    api key")
    shown = plain.stdout + plain.stderr + as_json.stdout + as_json.stderr
    leaks = [KEY[i : i + 6] for i in range(len(KEY) - 5) if KEY[i : i + 6] in shown]
    assert not leaks, f"parts of the key were printed: {leaks}"
    assert api.requests, "the API URL was never tried"
    for _method, headers in api.requests:
        assert KEY not in json.dumps(headers) and "x-api-key" not in {h.lower() for h in headers}


def test_json_output(cli: Cli, api: Api) -> None:
    proc = cli("doctor", "--json")
    data = json.loads(proc.stdout)
    assert [c["name"] for c in data["checks"]] == CHECKS
    assert {c["status"] for c in data["checks"]} <= {"ok", "info", "warn", "fail"}
    assert data["ok"] is False and proc.returncode == 1  # no key
    assert all(c["fix"] for c in data["checks"] if c["status"] in ("warn", "fail"))


def test_an_unreachable_api_fails_fast(cli: Cli, api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:  # a port nothing listens on once this socket is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://user:pw@127.0.0.1:{port}/v1?token=x")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    start = time.monotonic()
    proc = cli("doctor")
    assert time.monotonic() - start < 15
    assert proc.returncode == 1
    line = lines_by_check(proc.stdout)["api url"]
    assert line.startswith("fail  api url") and "fix: " in line
    assert f"http://127.0.0.1:{port}/v1" in line and "pw" not in line and "token" not in line


def test_tmux_and_claude_found_on_path(cli: Cli, api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", fake_bin(tmp_path, tmux="tmux 3.1", claude="2.1.197 (Claude Code)"))
    lines = lines_by_check(cli("doctor").stdout)
    assert lines["tmux"].startswith("warn  tmux") and "older than 3.2" in lines["tmux"] and "fix: " in lines["tmux"]
    assert lines["claude"].startswith("ok    claude") and "2.1.197 (Claude Code)" in lines["claude"]
    (tmp_path / "bin" / "claude").unlink()
    fake_bin(tmp_path, tmux="tmux next-3.4")
    lines = lines_by_check(cli("doctor").stdout)
    assert lines["tmux"].startswith("ok    tmux") and "3.4" in lines["tmux"]
    assert lines["claude"].startswith("warn  claude")
    assert "fix: npm install -g @anthropic-ai/claude-code" in lines["claude"]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert lines_by_check(cli("doctor").stdout)["tmux"].startswith("warn  tmux")


def test_session_and_unwritable_config_dir(cli: Cli, api: Api, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(blocker / "claude"), "AGENTTEAMS_WATCH": "poll"}
    env.update(TMUX="/tmp/tmux-0/default,1,0", TMUX_PANE="%7")  # the `cli` fixture's own env would drop these
    proc = cli("doctor", env=env)  # no directory can be made under a regular file, not even by root
    lines = lines_by_check(proc.stdout)
    assert proc.returncode == 1
    assert lines["config dir"].startswith("fail  config dir") and "CLAUDE_CONFIG_DIR" in lines["config dir"]
    assert lines["session"].startswith("info  session") and "inside tmux (pane %7)" in lines["session"]
    assert lines["inotify"].startswith("warn  inotify") and "fix: unset AGENTTEAMS_WATCH" in lines["inotify"]


def test_settings_problems_and_an_api_key_helper(cli: Cli, api: Api, config_root: Path, tmp_path: Path) -> None:
    (config_root / "settings.json").write_text(json.dumps({"apiKeyHelper": f"touch {tmp_path / 'ran'}; echo {KEY}"}))
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    bad = work / ".claude" / "settings.local.json"
    bad.write_text('{"model": "opus",,}')
    lines = lines_by_check(cli("doctor", cwd=work).stdout)
    assert lines["settings"].startswith("warn  settings") and f"{bad}:1:" in lines["settings"]
    assert "fix: fix the file named" in lines["settings"]
    assert lines["api key"].startswith("ok    api key") and "apiKeyHelper from user" in lines["api key"]
    assert not (tmp_path / "ran").exists()  # doctor says where the key would come from; it runs nothing
    bad.unlink()
    line = lines_by_check(cli("doctor", cwd=work).stdout)["settings"]
    assert line.startswith("ok    settings") and str(config_root / "settings.json") in line
