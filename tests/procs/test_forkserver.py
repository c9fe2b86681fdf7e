"""The fork server and its launcher, as real processes: stdio, env, key, signals, exit codes, reaping, fallback."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agentteams.procs import launcher as launch
from agentteams.procs.fork import server as forkserver
from agentteams.procs.socket_dir import ForkServerError, ensure_private
from tests.support.cli import Cli
from tests.support.forkserver_lab import (
    HOOK,
    TEAMMATE,
    gone,
    launch_teammate,
    launcher_env,
    read_line,
    short_private_dir,
    start_server,
)

# the launcher's contract, run here through the console-script launcher (and again in test_panelaunch.py)
from tests.support.launcher_contract import (  # noqa: F401 (collected here: a test module runs what it holds)
    test_a_launchers_own_key_wins,
    test_child_killed_makes_the_launcher_exit_nonzero,
    test_child_runs_warm_on_the_launchers_stdio,
    test_env_is_the_launchers_and_the_key_comes_only_from_the_server,
    test_exit_codes_propagate,
    test_launcher_gone_takes_the_child_along,
    test_launcher_stops_waiting_when_the_starting_server_dies,
    test_launcher_waits_for_a_starting_server,
    test_no_zombies_remain,
    test_real_cli_through_the_server_matches_a_cold_start,
    test_sigint_reaches_the_child_as_keyboard_interrupt,
    test_unreachable_server_falls_back_to_a_cold_start,
)
from tests.support.wait import wait_until


def test_only_teammate_command_lines_use_the_server() -> None:
    assert launch.is_teammate_argv(["agentteams", *TEAMMATE])
    assert launch.is_teammate_argv(["agentteams", "--agent-id=x@t"])
    assert not launch.is_teammate_argv(["agentteams", "-p", "hi"])
    assert not launch.is_teammate_argv(["--agent-id"])  # argv[0] is the program
    assert launch.server_pid("/run/user/0/agentteams/fs-123.sock") == 123
    assert launch.server_pid("/tmp/x/fs-.sock") is None
    assert launch.server_pid("/tmp/x/other.sock") is None


def test_closing_stdin_stops_the_server_and_teammates_carry_on(cli: Cli, config_root: Path, tmp_path: Path) -> None:
    directory = short_private_dir()
    fs = start_server(directory)
    proc = launch_teammate(cli, launcher_env(config_root, fs, "hook_sleep"), tmp_path)
    try:
        child = int(read_line(proc))
        assert fs.proc.stdin is not None
        fs.proc.stdin.close()
        wait_until(lambda: fs.proc.poll() is not None, 5.0, "the server to exit on EOF")
        assert fs.proc.returncode == 0
        assert not fs.socket_path.exists()
        assert not gone(child), "a running teammate must outlive the fork server"
        assert fs.env() == {}
    finally:
        proc.kill()
        proc.communicate(timeout=10)
        fs.stop()
        fs.stop()  # idempotent
        shutil.rmtree(directory, ignore_errors=True)
    wait_until(lambda: gone(child), 2.0, "the orphaned child to follow its launcher")


def _raw_client(path: Path, uid: int | None) -> str:
    """Speak the launcher's protocol from a forked process (as `uid`): "answered", "refused" or "error"."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked client
        status = 2
        try:
            if uid is not None:
                os.setuid(uid)
            null = os.open(os.devnull, os.O_RDWR)
            env = {launch.TEST_ENTRY_VAR: HOOK + "hook_report"}
            payload = json.dumps({"argv": ["x"], "env": env, "cwd": "/", "umask": 0o22}).encode()
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(20)
                s.connect(str(path))
                socket.send_fds(s, [launch.HEADER.pack(len(payload)) + payload], [null, null, null])
                status = 0 if s.recv(launch.FRAME.size)[:1] == b"P" else 1
        except (BrokenPipeError, ConnectionResetError):
            status = 1  # closed on us before the request went through: refused as well
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    return ["answered", "refused", "error"][os.waitstatus_to_exitcode(status)]


@pytest.mark.proc  # a fork server of its own
@pytest.mark.skipif(os.getuid() != 0, reason="needs root to connect as another uid")
def test_another_uid_is_refused() -> None:
    directory = short_private_dir()
    fs = start_server(directory)
    try:
        directory.chmod(0o755)  # let the other uid reach the socket: only the server's own check stands
        fs.socket_path.chmod(0o666)
        assert _raw_client(fs.socket_path, 65534) == "refused"
        assert _raw_client(fs.socket_path, None) == "answered"  # the same request from our own uid
        assert fs.proc.poll() is None
    finally:
        fs.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.proc  # runs the fork server, which refuses the directory
def test_socket_directory_must_be_private(tmp_path: Path) -> None:
    fresh = ensure_private(tmp_path / "new")
    assert fresh.stat().st_mode & 0o777 == 0o700
    open_dir = tmp_path / "open"
    open_dir.mkdir(mode=0o755)
    open_dir.chmod(0o755)
    with pytest.raises(ForkServerError, match="mode 0700"):
        ensure_private(open_dir)
    link = tmp_path / "link"
    link.symlink_to(fresh)
    with pytest.raises(ForkServerError):
        ensure_private(link)
    proc = subprocess.run(
        [sys.executable, "-m", "agentteams.procs.fork.server", "--dir", str(open_dir)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "refusing socket directory" in proc.stderr


@pytest.mark.parametrize("module", [*forkserver.PREIMPORTS, *forkserver.OPTIONAL_PREIMPORTS])
def test_every_preimport_resolves(module: str) -> None:
    """The server swallows a failed optional pre-import, so a moved module would silently slow every spawn."""
    import importlib.util

    assert importlib.util.find_spec(module) is not None, f"fork server pre-imports {module}, which does not exist"


def test_a_request_sent_whole_is_not_followed_by_an_empty_send(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server may read the request, answer and close before the launcher's next step: a send of the (empty)
    rest then failed with EPIPE, and the teammate started cold a second time (seen under load)."""
    ours, server = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    real_send_fds = socket.send_fds

    def send_then_server_closes(sock: socket.socket, buffers: list[bytes], fds: list[int]) -> int:
        sent = real_send_fds(sock, buffers, fds)
        _, got, _, _ = socket.recv_fds(server, 1 << 20, 3)
        for fd in got:
            os.close(fd)
        server.close()  # answered at once and gone
        return sent

    monkeypatch.setattr(socket, "send_fds", send_then_server_closes)  # the module launch.py calls it through
    with ours:
        launch.Relay(ours)._send(["agentteams", "--version"])  # no BrokenPipeError


def test_a_starting_server_removes_the_sockets_of_dead_servers(tmp_path: Path) -> None:
    """A killed fork server leaves its `fs-<pid>.sock`: the next one to start removes it (and only such)."""
    from agentteams.procs.socket_dir import sweep_dead

    gone = subprocess.Popen(["true"])
    gone.wait()
    directory = ensure_private(tmp_path / "socks")
    sockets = []
    for pid in (gone.pid, os.getpid()):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(str(directory / f"fs-{pid}.sock"))
        sockets.append(s)
    (directory / "fs-1.sock").write_text("not a socket")  # never removed: only a socket is a server's
    (directory / "warm.sock").write_text("")
    assert sweep_dead(directory) == [directory / f"fs-{gone.pid}.sock"]
    assert sorted(p.name for p in directory.iterdir()) == sorted([f"fs-{os.getpid()}.sock", "fs-1.sock", "warm.sock"])
    for s in sockets:
        s.close()


@pytest.mark.proc
def test_a_teammate_or_warm_lead_imports_nothing_of_ours_past_the_preimports() -> None:
    """Whatever of ours a forked teammate or warm `-p` lead would import after the fork is paid on its way to its first
    request: the pre-import list covers both paths (a module moved or split must be named there again)."""
    import subprocess
    import sys

    code = (
        "import sys, importlib, contextlib\n"
        "from agentteams.procs.fork import server\n"
        "for n in server.PREIMPORTS: importlib.import_module(n)\n"
        "for n in server.OPTIONAL_PREIMPORTS:\n"
        "    with contextlib.suppress(Exception): importlib.import_module(n)\n"
        "before = set(sys.modules)\n"
        "for n in ('agentteams.run.agent', 'agentteams.run.teammate', 'agentteams.run.headless',\n"
        "          'agentteams.run.lead_setup', 'agentteams.procs.fork.early', 'agentteams.procs.fork.child'):\n"
        "    importlib.import_module(n)\n"
        "print(sorted(m for m in set(sys.modules) - before if m.startswith('agentteams')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]", done.stdout
