"""A teammate started before its pane (the lead's early start) and the fork server's spare child, as real processes:
output held and shown once the pane's launcher attaches, stdin/env/exit code through the late launcher, cancel, a lead
that gives no go-ahead, and the spare that serves the next connection."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentteams.backends.tmux import TmuxError
from agentteams.procs import launcher as launch
from agentteams.procs.fork import client as forkclient
from agentteams.procs.fork import early as forkearly
from agentteams.procs.fork.client import ForkServer, Prestarted
from agentteams.store.opener import open_store
from agentteams.store.paths import Layout
from agentteams.team.spawn.base import SpawnRequest, teammate_argv
from agentteams.team.spawn.prestart import FIRST_REQUEST_WAIT, PrestartingSpawner
from tests.support.cli import Cli
from tests.support.forkserver_lab import SERVER_KEY, TEAMMATE
from tests.support.procs import child_env, pid_alive
from tests.support.wait import wait_until

HOOK = f"{__name__}:"


# -- hooks the forked child runs instead of the CLI (launch.TEST_ENTRY_VAR) --------------------------------


def hook_early() -> None:
    """Mark that we run, write early output (held), wait for the pane, then report what we see and exit $FS_EXIT."""
    tty_before = sys.stdout.isatty()
    Path(os.environ["FS_MARK"]).write_text(str(os.getpid()))
    print("early out", flush=True)
    print("early err", file=sys.stderr, flush=True)
    attached = threading.Event()
    forkearly.on_pane(lambda _pane: attached.set())
    attached.wait(30)
    info = {
        "pid": os.getpid(), "ppid": os.getppid(), "stdin": sys.stdin.readline(), "tty_before": tty_before,
        "pane_only": os.environ.get("FS_PANE_ONLY"), "key": os.environ.get("ANTHROPIC_API_KEY"),
        "forkserver": os.environ.get(launch.ENV_VAR), "lead_only": os.environ.get("FS_LEAD_ONLY"),
        "nice": os.getpriority(os.PRIO_PROCESS, 0), "fallback": os.environ.get(launch.FALLBACK_VAR),
    }  # fmt: skip
    print(json.dumps(info), flush=True)
    sys.exit(int(os.environ.get("FS_EXIT", "0")))


def hook_fallback() -> None:
    """Report who we are: the teammate a pane started through the server when its early one was gone."""
    info = {"pid": os.getpid(), "ppid": os.getppid(), "nice": os.getpriority(os.PRIO_PROCESS, 0)}
    print(json.dumps(info), flush=True)


def hook_wait() -> None:
    """Mark that we run, then wait to be signalled (a minute at most)."""
    Path(os.environ["FS_MARK"]).write_text(str(os.getpid()))
    threading.Event().wait(60)


# -- helpers -------------------------------------------------------------------------------------------


def _lead_env(config_root: Path, hook: str, mark: Path, **extra: str) -> dict[str, str]:
    """What a lead passes an early start: its teammate environment, no key (the server lends its own)."""
    env = {k: v for k, v in child_env(config_root).items() if not k.startswith(("ANTHROPIC_", "TMUX"))}
    return {**env, launch.TEST_ENTRY_VAR: HOOK + hook, "FS_MARK": str(mark), **extra}


def _argv(cli: Cli) -> list[str]:
    return cli.argv(*TEAMMATE)


def _pane(started: Prestarted, argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    """The pane's process: the lean launcher (niced), as a lead's tmux pane runs it for an early teammate."""
    pipe = subprocess.PIPE
    return subprocess.Popen([*started.prefix, *ForkServer.launcher_argv(), *argv], env=env, cwd=cwd, stdin=pipe,
                            stdout=pipe, stderr=pipe, text=True)  # fmt: skip


def _running_early(
    cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path
) -> tuple[list[str], dict[str, str], Prestarted]:
    """A teammate the server started early, once it runs (waiting, its pane not made): argv, env, and its handle."""
    mark = tmp_path / "ran"
    argv, env = _argv(cli), _lead_env(config_root, "hook_wait", mark)
    started = server.prestart(argv, env, tmp_path)
    assert started is not None
    wait_until(mark.exists, 10.0, "the early teammate to run")
    return argv, env, started


def _fallback_pane(
    started: Prestarted, argv: list[str], env: dict[str, str], cwd: Path
) -> tuple[str, str, subprocess.Popen[str]]:
    """Its pane, made after it ended: a teammate the pane starts instead reports itself (hook_fallback)."""
    pane = _pane(started, argv, {**env, **started.env, launch.TEST_ENTRY_VAR: HOOK + "hook_fallback"}, cwd)
    out, err = pane.communicate(timeout=30)
    return out, err, pane


def _nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[16])


def _children(ppid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_bytes().rpartition(b")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == ppid and fields[0] != b"Z":
                found.append(int(entry))
    return found


# -- tests ---------------------------------------------------------------------------------------------


def test_an_early_teammate_runs_before_its_pane_and_shows_everything_once_attached(
    cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path
) -> None:
    mark = tmp_path / "ran"
    argv = _argv(cli)
    env = _lead_env(config_root, "hook_early", mark, FS_EXIT="7", FS_LEAD_ONLY="lead")
    started = server.prestart(argv, env, tmp_path)
    assert started is not None
    wait_until(mark.exists, 10.0, "the early teammate to run before any pane exists")
    assert int(mark.read_text()) == started.pid
    socket_path = started.env[launch.ENV_VAR]
    assert Path(socket_path).name == f"fs-{started.pid}.sock"
    pane_env = {**env, **started.env, "FS_PANE_ONLY": "yes"}
    pane_env.pop(launch.TEST_ENTRY_VAR)
    pane = _pane(started, argv, pane_env, tmp_path)
    launcher = Path(f"/proc/{pane.pid}")
    assert started.prefix, "`nice` is on this machine's PATH"
    nice = started.prefix[0].encode()
    launched = ForkServer.launcher_argv()[-1].encode()  # before its first exec the child is still this pytest

    def exec_done() -> bool:
        cmdline = launcher.joinpath("cmdline").read_bytes()
        return launched in cmdline and not cmdline.startswith(nice)

    wait_until(exec_done, 10.0, "the launcher (exec)")
    assert _nice(pane.pid) == forkclient.LAUNCHER_NICE  # its start yields to the teammate's on a busy machine
    seen = launcher.joinpath("cmdline").read_bytes() + launcher.joinpath("environ").read_bytes()
    out, err = pane.communicate("hello\n", timeout=30)
    assert pane.returncode == 7, err
    first, report = out.splitlines()
    assert first == "early out"  # held until the pane attached, then shown there first
    assert err == "early err\n"
    info = json.loads(report)
    assert info["pid"] == started.pid and info["stdin"] == "hello\n"
    assert info["tty_before"]  # renderers choose as they would in the pane it is about to have
    assert info["pane_only"] == "yes" and info["lead_only"] == "lead"  # the pane's environment joins the lead's
    assert info["key"] == SERVER_KEY and SERVER_KEY.encode() not in seen
    assert info["forkserver"] is None and info["fallback"] is None
    assert info["nice"] == 0  # the teammate is not niced with its launcher
    assert not Path(socket_path).exists()  # its own socket went once the pane attached


def test_a_pane_whose_early_teammate_is_gone_starts_it_through_the_server(
    cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path
) -> None:
    argv, env, started = _running_early(cli, server, config_root, tmp_path)
    started.cancel()
    wait_until(lambda: not pid_alive(started.pid), 5.0, "the early teammate to end")
    out, err, pane = _fallback_pane(started, argv, env, tmp_path)
    assert pane.returncode == 0, err
    info = json.loads(out)
    assert info["ppid"] == server.proc.pid  # warm, from the server: not a cold start in the niced pane
    assert info["nice"] == 0


def test_a_pane_whose_early_teammate_was_killed_ends_with_its_death(
    cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path
) -> None:
    """A teammate killed before its pane attached left its socket: the pane says so in one line and ends as a killed
    process's would (the lead sees a death); it does not start another teammate in its place."""
    argv, env, started = _running_early(cli, server, config_root, tmp_path)
    os.kill(started.pid, signal.SIGKILL)
    wait_until(lambda: not pid_alive(started.pid), 5.0, "the killed teammate to end")
    own_socket = Path(started.env[launch.ENV_VAR])
    assert own_socket.exists()  # a killed process removes nothing
    out, err, pane = _fallback_pane(started, argv, env, tmp_path)
    assert pane.returncode == launch.DIED_CODE
    assert out == "", "no teammate was started in the killed one's place"
    assert err.count("\n") == 1 and f"pid {started.pid}" in err and "ended before its pane attached" in err, err
    assert not own_socket.exists()


def test_a_cancelled_early_start_ends(cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path) -> None:
    mark = tmp_path / "ran"
    started = server.prestart(_argv(cli), _lead_env(config_root, "hook_wait", mark), tmp_path)
    assert started is not None
    wait_until(mark.exists, 10.0, "the early teammate to run")
    started.cancel()  # what the lead does when its pane cannot be made
    wait_until(lambda: not pid_alive(started.pid), 5.0, "the cancelled teammate to end")
    assert not Path(started.env[launch.ENV_VAR]).exists()


def test_an_early_child_without_the_leads_go_ahead_never_runs(
    cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path
) -> None:
    mark = tmp_path / "ran"
    request = {"argv": _argv(cli), "env": _lead_env(config_root, "hook_wait", mark), "cwd": str(tmp_path),
               "umask": 0o022, "attach": True}  # fmt: skip
    null = os.open(os.devnull, os.O_RDWR)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(server.socket_path))
        launch.send_request(sock, request, [null, null, null])
        os.close(null)
        frame = launch.read_frame(sock)
        assert frame is not None and frame[0] == b"P"
    # a lead that gave up closes without its go-ahead: that child must not become a second teammate
    wait_until(lambda: not pid_alive(frame[1]), 5.0, "the child the lead gave up on to exit")
    assert not mark.exists()
    assert not (server.socket_path.parent / f"fs-{frame[1]}.sock").exists()


def test_the_spare_child_takes_the_next_connection(
    cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path
) -> None:
    wait_until(lambda: len(_children(server.proc.pid)) == 1, 10.0, "the server's spare child")
    (spare,) = _children(server.proc.pid)
    mark = tmp_path / "ran"
    started = server.prestart(_argv(cli), _lead_env(config_root, "hook_wait", mark), tmp_path)
    assert started is not None and started.pid == spare  # forked before the connection came
    wait_until(lambda: len(_children(server.proc.pid)) == 2, 5.0, "a new spare beside the one taken")
    started.cancel()
    wait_until(lambda: not pid_alive(spare), 5.0, "the cancelled teammate to end")


def test_a_dead_process_socket_of_the_same_pid_is_no_obstacle(
    cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path
) -> None:
    """The socket directory is shared by every lead of the user: a killed one's `fs-<pid>.sock` stays, and pids
    come round again."""
    wait_until(lambda: len(_children(server.proc.pid)) == 1, 10.0, "the server's spare child")
    (spare,) = _children(server.proc.pid)
    stale = server.socket_path.with_name(f"fs-{spare}.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(stale))  # left behind, nobody listening
    mark = tmp_path / "ran"
    started = server.prestart(_argv(cli), _lead_env(config_root, "hook_wait", mark), tmp_path)
    assert started is not None and started.pid == spare
    wait_until(mark.exists, 10.0, "the early teammate to run despite the stale file")
    started.cancel()
    wait_until(lambda: not pid_alive(spare), 5.0, "the cancelled teammate to end")


def test_held_output_keeps_its_order_and_says_tty_until_attached() -> None:
    r, w = os.pipe()
    try:
        os.set_blocking(r, False)
        held = forkearly.HeldOutput(w, tty=True)
        held.write(b"one ")
        held.write(memoryview(b"two "))
        assert held.isatty()
        with pytest.raises(BlockingIOError):
            os.read(r, 100)  # nothing written through before the pane is there
        held.release()
        held.write(b"three")
        assert os.read(r, 100) == b"one two three"
        assert not held.isatty()  # now the real fd's answer: a pipe
    finally:
        os.close(r)
        os.close(w)


def test_a_watcher_needs_no_ldconfig(tmp_path: Path) -> None:
    """inotify_simple, left alone, finds libc with `ldconfig -p` in a subprocess on every process's first watcher."""
    code = (
        "import ctypes.util, sys\n"
        "def refuse(name): raise AssertionError('find_library called')\n"
        "ctypes.util.find_library = refuse\n"
        "import inotify_simple\n"
        "inotify_simple.find_library = refuse\n"
        "from agentteams.store.fs.watch import FileWatcher\n"
        f"w = FileWatcher([__import__('pathlib').Path({str(tmp_path)!r}) / 'f'])\n"
        "print(w.mode)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "inotify"


@dataclass
class _Started:
    env: dict[str, str]
    prefix: list[str]
    cancelled: bool = False
    awaited: list[float] = field(default_factory=list)  # each wait for the first request, by its timeout

    def await_request(self, timeout: float) -> None:
        self.awaited.append(timeout)

    def cancel(self) -> None:
        self.cancelled = True


def test_the_lead_starts_the_teammate_first_then_its_pane_pointed_at_it(
    layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PrestartingSpawner: the teammate started with the pane's own command line and environment, then the pane
    (niced launcher, the teammate's socket); no early start: the plain pane; a pane that fails: the teammate ends."""
    served = {launch.ENV_VAR: str(tmp_path / "fs-1.sock")}
    asked: list[tuple[list[str], dict[str, str]]] = []
    answer: list[_Started | None] = []

    def prestart(argv: list[str], env: dict[str, str], cwd: Path) -> _Started | None:
        asked.append((argv, env))
        return answer[-1]

    spawner = PrestartingSpawner(open_store(layout), prestart, extra_env=lambda: dict(served),
                                 launcher=ForkServer.launcher_argv())  # fmt: skip
    panes: list[tuple[list[str], dict[str, str]]] = []
    fail = False

    def record(target: Any, name: str, color: str, argv: list[str], cwd: Path, env: dict[str, str],
               **kw: Any) -> tuple[str, int | None]:  # fmt: skip
        if fail:
            raise TmuxError("no room")
        started = answer[-1]
        assert started is None or started.awaited == [FIRST_REQUEST_WAIT], "the pane before the first request"
        panes.append((argv, env))
        return "%9", None

    monkeypatch.setattr(spawner.tmux, "spawn_pane_process", record)
    req = SpawnRequest(name="x", team="t", color="blue", cwd=tmp_path, parent_session_id="S", model="m")
    own = teammate_argv(req, spawner.command)
    early = _Started({launch.ENV_VAR: "/d/fs-7.sock", launch.FALLBACK_VAR: served[launch.ENV_VAR]}, ["nice"])
    answer.append(early)
    handle = spawner.spawn(req)
    assert handle.pane_id == "%9"
    assert asked[0][0] == own and asked[0][1][launch.ENV_VAR] == served[launch.ENV_VAR]
    assert panes[0][0] == ["nice", *ForkServer.launcher_argv(), *own]
    assert panes[0][1][launch.ENV_VAR] == "/d/fs-7.sock"  # the pane's launcher attaches to the early teammate
    answer.append(None)  # no early start (say the server is still starting): the pane starts it, as before
    spawner.spawn(req)
    assert panes[1][0] == [*ForkServer.launcher_argv(), *own]
    answer.append(early := _Started({launch.ENV_VAR: "/d/fs-8.sock"}, []))
    fail = True
    with pytest.raises(TmuxError):
        spawner.spawn(req)
    assert early.cancelled


def test_the_lead_waits_for_the_first_request_until_it_is_out_the_child_ends_or_the_deadline() -> None:
    """Prestarted.await_request against forkearly.request_out, over a real socket pair: the child's word ends the
    wait at once (and is said once), so does its end (EOF); silence ends it at the deadline."""
    said, theirs = socket.socketpair()
    started = Prestarted(1, conn=said)
    forkearly._lead = theirs
    t0 = time.monotonic()
    threading.Timer(0.05, forkearly.request_out).start()
    started.await_request(5.0)
    assert 0.04 <= time.monotonic() - t0 < 2.0
    assert started.conn is None and said.fileno() == -1  # closed by the wait
    forkearly.request_out()  # a later request: nothing more to say, nothing raised
    assert forkearly._lead is None

    said, theirs = socket.socketpair()
    forkearly._lead = theirs
    forkearly.request_out()
    assert said.recv(8) == forkearly.REQUEST_OUT and said.recv(8) == b"", "said once, then the connection closed"
    said.close()

    said, theirs = socket.socketpair()
    threading.Timer(0.05, theirs.close).start()  # the child ended before its first request
    t0 = time.monotonic()
    Prestarted(1, conn=said).await_request(5.0)
    assert time.monotonic() - t0 < 2.0

    said, theirs = socket.socketpair()
    t0 = time.monotonic()
    Prestarted(1, conn=said).await_request(0.2)  # it never says: the pane comes after the deadline all the same
    assert time.monotonic() - t0 >= 0.2
    theirs.close()
    Prestarted(1).await_request(5.0)  # none to wait for (a cold start in its pane): at once
