"""The fork server and its launcher, as real processes: stdio, env, key, signals, exit codes, reaping, fallback."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentteams.model.anthropic_client import SDK_MODULES
from agentteams.procs import launcher as launch
from agentteams.procs.fork import server as forkserver
from agentteams.procs.fork.client import ForkServer
from agentteams.procs.socket_dir import ForkServerError, ensure_private
from tests.support.cli import Cli
from tests.support.procs import child_env, pid_alive
from tests.support.wait import wait_until

ROOT = Path(__file__).resolve().parent.parent
TEAMMATE = ["--agent-id", "x@t", "--agent-name", "x", "--team-name", "t", "--agent-color", "blue",
            "--parent-session-id", "S"]  # fmt: skip
SERVER_KEY = "sk-ant-test-server-only-0123456789"
HOOK = f"{__name__}:"  # the child imports this module (PYTHONPATH=ROOT in the server's env) and runs a hook below


# -- hooks the forked child runs instead of the CLI (launch.TEST_ENTRY_VAR) --------------------------------


def hook_report() -> None:
    """Read one stdin line, print what this teammate process sees as JSON, exit with $FS_EXIT."""
    line = sys.stdin.readline()
    info = {
        "pid": os.getpid(), "ppid": os.getppid(), "sid": os.getsid(0), "argv": sys.argv, "cwd": os.getcwd(),
        "stdin": line, "anthropic": "anthropic" in sys.modules, "only": os.environ.get("FS_LAUNCHER_ONLY"),
        "key": os.environ.get("ANTHROPIC_API_KEY"), "forkserver": os.environ.get(launch.ENV_VAR),
        "cmdline": Path("/proc/self/cmdline").read_bytes().decode(errors="replace"),
        "sigint": signal.getsignal(signal.SIGINT) is signal.default_int_handler,
        "built": sorted(type(c).__name__ for c in sys.modules["agentteams.cli"]._COMMANDS.values()),
    }  # fmt: skip
    print(json.dumps(info), flush=True)
    print("child stderr", file=sys.stderr)
    sys.exit(int(os.environ.get("FS_EXIT", "0")))


def hook_sleep() -> None:
    """Print our pid, then wait to be signalled (or give up after a minute)."""
    print(os.getpid(), flush=True)
    time.sleep(60)


# -- helpers -------------------------------------------------------------------------------------------


def _short_private_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="fst-", dir="/tmp"))  # 0700, and short enough for AF_UNIX paths


def _server_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TMUX", "ANTHROPIC_"))}
    env["PYTHONPATH"] = str(ROOT)
    env["ANTHROPIC_API_KEY"] = SERVER_KEY
    return env


def _start(directory: Path) -> ForkServer:
    server = ForkServer.start(_server_env(), directory=directory)
    assert server.wait_ready(120), f"fork server not ready: {server.error}"
    return server


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    directory = _short_private_dir()
    fs = _start(directory)
    yield fs
    fs.stop()
    shutil.rmtree(directory, ignore_errors=True)


def _env(config_root: Path, fs: ForkServer | None, hook: str | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in child_env(config_root).items() if not k.startswith("ANTHROPIC_")}
    if fs is not None:
        env.update(fs.env())
    if hook:
        env[launch.TEST_ENTRY_VAR] = HOOK + hook
    env.update(extra)
    return env


def _launch(cli: Cli, env: dict[str, str], cwd: Path, *args: str) -> subprocess.Popen[str]:
    """`agentteams <teammate flags> ARGS`: the launcher, which hands the teammate to a fork server if it can."""
    pipe = subprocess.PIPE
    return cli.popen(*TEAMMATE, *args, env=env, cwd=cwd, stdin=pipe, stdout=pipe, stderr=pipe)


def _line(proc: subprocess.Popen[str], timeout: float = 30) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no line from the launcher in time"
    return proc.stdout.readline()


def _finish(proc: subprocess.Popen[str], stdin: str = "", timeout: float = 30) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    assert "Traceback" not in out + err, err
    return proc.returncode, out, err


def _gone(pid: int) -> bool:
    return not pid_alive(pid)


def _zombies_of(ppid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_bytes().rpartition(b")")[2].split()
            except OSError:
                continue
            if fields[0] == b"Z" and int(fields[1]) == ppid:
                found.append(int(entry))
    return found


# -- tests ---------------------------------------------------------------------------------------------


def test_child_runs_warm_on_the_launchers_stdio(
    cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path
) -> None:
    proc = _launch(cli, _env(config_root, server, "hook_report"), tmp_path)
    code, out, err = _finish(proc, "hello\n")
    assert code == 0, err
    info = json.loads(out)
    assert info["stdin"] == "hello\n"
    assert err == "child stderr\n"
    assert info["pid"] != proc.pid
    assert info["ppid"] == server.proc.pid != proc.pid
    assert info["sid"] == info["pid"]  # its own session: it outlives neither, but takes no terminal signals
    assert info["argv"][-len(TEAMMATE) :] == TEAMMATE
    assert Path(info["cwd"]) == tmp_path
    assert info["anthropic"], "the SDK should already be imported in a forked teammate"
    assert info["built"] == ["TyperCommand"], "the server should have built the teammate's click command"
    assert info["forkserver"] is None  # the child runs the CLI itself, never launches again
    assert info["sigint"]


def test_real_cli_through_the_server_matches_a_cold_start(
    cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path
) -> None:
    warm = _finish(_launch(cli, _env(config_root, server), tmp_path, "--version"))
    cold = _finish(_launch(cli, _env(config_root, None), tmp_path, "--version"))
    assert warm == cold
    assert warm[0] == 0 or "agent-id" in warm[2]  # fine either way, as long as both paths agree


def test_env_is_the_launchers_and_the_key_comes_only_from_the_server(
    cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path
) -> None:
    proc = _launch(cli, _env(config_root, server, "hook_report", FS_LAUNCHER_ONLY="yes"), tmp_path)
    launcher = f"/proc/{proc.pid}"
    seen = Path(f"{launcher}/cmdline").read_bytes() + Path(f"{launcher}/environ").read_bytes()
    code, out, err = _finish(proc, "\n")
    assert code == 0, err
    info = json.loads(out)
    assert info["only"] == "yes"
    assert info["key"] == SERVER_KEY
    assert SERVER_KEY.encode() not in seen
    assert SERVER_KEY not in info["cmdline"]


def test_a_launchers_own_key_wins(cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path) -> None:
    env = _env(config_root, server, "hook_report", ANTHROPIC_API_KEY="sk-ant-launcher")
    code, out, err = _finish(_launch(cli, env, tmp_path), "\n")
    assert code == 0, err
    assert json.loads(out)["key"] == "sk-ant-launcher"


@pytest.mark.parametrize("status", [3, 0, 255])
def test_exit_codes_propagate(cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path, status: int) -> None:
    code, _, err = _finish(_launch(cli, _env(config_root, server, "hook_report", FS_EXIT=str(status)), tmp_path), "\n")
    assert code == status, err


def test_child_killed_makes_the_launcher_exit_nonzero(
    cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path
) -> None:
    proc = _launch(cli, _env(config_root, server, "hook_sleep"), tmp_path)
    child = int(_line(proc))
    os.kill(child, signal.SIGKILL)
    code, _, err = _finish(proc, timeout=5)
    assert code == launch.DIED_CODE
    assert err.count("\n") == 1 and "died" in err, err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL, signal.SIGHUP])
def test_launcher_gone_takes_the_child_along(
    cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    proc = _launch(cli, _env(config_root, server, "hook_sleep"), tmp_path)
    child = int(_line(proc))
    proc.send_signal(sig)
    wait_until(lambda: _gone(child), 2.0, f"the child to go after {sig.name} to its launcher")
    proc.communicate(timeout=10)
    assert proc.returncode in (-signal.SIGKILL, 128 + sig)


def test_sigint_reaches_the_child_as_keyboard_interrupt(
    cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path
) -> None:
    proc = _launch(cli, _env(config_root, server, "hook_sleep"), tmp_path)
    _line(proc)
    proc.send_signal(signal.SIGINT)
    code, _, err = _finish(proc, timeout=10)
    assert code == 130, err


def test_no_zombies_remain(cli: Cli, server: ForkServer, config_root: Path, tmp_path: Path) -> None:
    procs = [_launch(cli, _env(config_root, server, "hook_report", FS_EXIT=str(n)), tmp_path) for n in range(6)]
    assert [_finish(p, "\n")[0] for p in procs] == list(range(6))
    wait_until(lambda: not _zombies_of(server.proc.pid), 5.0, "the server to reap its children")


@pytest.mark.parametrize("kind", ["missing", "stale", "other-name"])
@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_unreachable_server_falls_back_to_a_cold_start(cli: Cli, config_root: Path, tmp_path: Path, kind: str) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    path = tmp_path / f"fs-{dead.pid}.sock"
    if kind == "stale":
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(str(path))  # a socket file nobody listens on
    elif kind == "other-name":
        path = tmp_path / "elsewhere.sock"
    start = time.monotonic()
    fallback = _finish(_launch(cli, _env(config_root, None, **{launch.ENV_VAR: str(path)}), tmp_path, "--version"))
    elapsed = time.monotonic() - start
    cold = _finish(_launch(cli, _env(config_root, None), tmp_path, "--version"))
    assert fallback == cold
    assert elapsed < launch.CONNECT_WAIT  # a dead server's pid is not waited for


def test_only_teammate_command_lines_use_the_server() -> None:
    assert launch.is_teammate_argv(["agentteams", *TEAMMATE])
    assert launch.is_teammate_argv(["agentteams", "--agent-id=x@t"])
    assert not launch.is_teammate_argv(["agentteams", "-p", "hi"])
    assert not launch.is_teammate_argv(["--agent-id"])  # argv[0] is the program
    assert launch.server_pid("/run/user/0/agentteams/fs-123.sock") == 123
    assert launch.server_pid("/tmp/x/fs-.sock") is None
    assert launch.server_pid("/tmp/x/other.sock") is None


def test_launcher_waits_for_a_starting_server(cli: Cli, config_root: Path, tmp_path: Path) -> None:
    """A server process that lives but does not listen yet: the launcher retries, then speaks the protocol."""
    directory = _short_private_dir()
    starting = subprocess.Popen(["sleep", "30"])
    try:
        path = directory / f"fs-{starting.pid}.sock"
        proc = _launch(cli, _env(config_root, None, **{launch.ENV_VAR: str(path)}, FS_LAUNCHER_ONLY="yes"), tmp_path)
        time.sleep(0.3)  # the scenario itself: the server is still importing when the pane starts
        assert proc.poll() is None, "the launcher gave up on a live server"
        with socket.socket(socket.AF_UNIX) as listener:
            listener.bind(str(path))
            listener.listen(1)
            listener.settimeout(10)
            conn, _ = listener.accept()
            with conn:
                data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
                assert len(fds) == 3
                while len(data) < launch.HEADER.size + launch.HEADER.unpack_from(data)[0]:
                    data += conn.recv(1 << 20)
                request = json.loads(data[launch.HEADER.size :])
                assert request["argv"][-len(TEAMMATE) :] == TEAMMATE
                assert request["env"]["FS_LAUNCHER_ONLY"] == "yes"
                assert Path(request["cwd"]) == tmp_path
                os.write(fds[1], b"via the passed fd\n")
                for fd in fds:
                    os.close(fd)
                conn.sendall(launch.FRAME.pack(b"P", starting.pid) + launch.FRAME.pack(b"X", 42))
        code, out, err = _finish(proc)
        assert code == 42, err  # seen once in a loaded full run as 1 (a cold start?): the launcher's stderr says why
        assert out == "via the passed fd\n"
    finally:
        starting.kill()
        starting.wait()
        shutil.rmtree(directory, ignore_errors=True)


def test_launcher_stops_waiting_when_the_starting_server_dies(cli: Cli, config_root: Path, tmp_path: Path) -> None:
    starting = subprocess.Popen(["sleep", "30"])
    path = tmp_path / f"fs-{starting.pid}.sock"
    proc = _launch(cli, _env(config_root, None, **{launch.ENV_VAR: str(path)}), tmp_path, "--version")
    time.sleep(0.3)  # the scenario: the launcher is waiting for a server that is still starting
    assert proc.poll() is None
    starting.kill()
    starting.wait()
    code, out, err = _finish(proc, timeout=launch.CONNECT_WAIT - 1)
    assert (code, out, err) == _finish(_launch(cli, _env(config_root, None), tmp_path, "--version"))


def test_closing_stdin_stops_the_server_and_teammates_carry_on(cli: Cli, config_root: Path, tmp_path: Path) -> None:
    directory = _short_private_dir()
    fs = _start(directory)
    proc = _launch(cli, _env(config_root, fs, "hook_sleep"), tmp_path)
    try:
        child = int(_line(proc))
        assert fs.proc.stdin is not None
        fs.proc.stdin.close()
        wait_until(lambda: fs.proc.poll() is not None, 5.0, "the server to exit on EOF")
        assert fs.proc.returncode == 0
        assert not fs.socket_path.exists()
        assert not _gone(child), "a running teammate must outlive the fork server"
        assert fs.env() == {}
    finally:
        proc.kill()
        proc.communicate(timeout=10)
        fs.stop()
        fs.stop()  # idempotent
        shutil.rmtree(directory, ignore_errors=True)
    wait_until(lambda: _gone(child), 2.0, "the orphaned child to follow its launcher")


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
    directory = _short_private_dir()
    fs = _start(directory)
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


# the SDK's modules are pre-imported by anthropic_client.warm_up(), which the server calls
@pytest.mark.parametrize("module", [*forkserver.PREIMPORTS, *SDK_MODULES, *forkserver.OPTIONAL_PREIMPORTS])
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
