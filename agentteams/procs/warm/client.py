"""The warm `-p` server, launcher side: hand this `-p` run to this install's server, or run cold at once and start one
for the next run. One server per user and install (its path, interpreter and baked environment), never another's.
Cheap stdlib imports only; the server is `agentteams.procs.warm.server`, the wire protocol `launch`'s plus a stamp."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import signal
import socket
import sys
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentteams.errors import AgentTeamsError
from agentteams.pids import pid_alive
from agentteams.procs import launcher as launch
from agentteams.procs import socket_dir

DISABLE_VAR = "AGENTTEAMS_NO_WARM"  # set (non-empty): every `-p` run starts cold and no server is started
IDLE_VAR = "AGENTTEAMS_WARM_IDLE"  # seconds the server waits for a next run before it exits
IDLE_DEFAULT = 600.0
PREFIX = "warm-"  # warm-<install key>.sock / .lock in the private socket directory
HANDSHAKE = 2.0  # a server that has not forked a child for us by then is hung: run cold (the child never runs)
STOP_WAIT = 3.0  # a server exits at once when told: wait this long at most for it to go
RETRY_INTERVAL = 0.01
# what a server process takes from its environment once, at start: a launcher with other values needs another one
BAKED_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONHASHSEED", "PYTHONWARNINGS", "SSL_CERT_FILE", "SSL_CERT_DIR",
             "LANG", "LC_ALL", "LC_CTYPE")  # fmt: skip


def is_print_argv(argv: list[str], commands: Collection[str] = ()) -> bool:
    """A `-p`/`--print` run of the agent (not one of the CLI's `commands`, not a teammate's): only those go warm."""
    args = argv[1:]
    args = args[: args.index("--")] if "--" in args else args
    if not args or args[0] in commands or launch.is_teammate_argv(argv):
        return False
    return "-p" in args or "--print" in args


def install_key(env: Mapping[str, str] | None = None) -> str:
    """Which install this is: its source directory, interpreter and baked environment (`env`: this process's), not
    its version or files' times: an upgrade in place is the same install, whose server the stamp finds stale."""
    import agentteams

    env = os.environ if env is None else env
    baked = ";".join(f"{k}={env.get(k, '')}" for k in BAKED_ENV)
    seen = f"{os.path.dirname(agentteams.__file__)}\0{_interpreter()}\0{sys.flags.utf8_mode}\0{baked}"
    return hashlib.sha256(seen.encode()).hexdigest()[:16]


def _interpreter() -> str:
    """This interpreter whatever name started it (`python`, `python3`, a console script's): its environment and
    binary."""
    return f"{sys.prefix}:{os.path.realpath(sys.executable)}"


def socket_path(directory: Path, key: str | None = None) -> Path:
    return directory / f"{PREFIX}{key or install_key()}.sock"


def lock_path(directory: Path, key: str | None = None) -> Path:
    return directory / f"{PREFIX}{key or install_key()}.lock"


def stamp() -> str:
    """This build and interpreter: version, source directory and its newest `.py` mtime, Python, baked env."""
    import agentteams

    root = os.path.dirname(agentteams.__file__)
    newest = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime_ns)
    env = ";".join(f"{k}={os.environ.get(k, '')}" for k in BAKED_ENV)
    python = f"{_interpreter()} {sys.version_info[:3]} utf8={sys.flags.utf8_mode}"
    return f"{agentteams.__version__} {root} {newest} {python} {env}"


def run_if_print(argv: list[str], commands: Collection[str]) -> None:
    """Exit with the run's code when the warm server ran it; return (run cold) when it cannot (or when `argv` is one
    of the CLI's `commands`, not the agent)."""
    if os.environ.get(DISABLE_VAR) or not is_print_argv(argv, commands):
        return
    try:
        directory = socket_dir.private_dir()
    except (OSError, AgentTeamsError):
        return
    try:
        code, ended_by = _hand_over(argv, directory)
    except KeyboardInterrupt:  # Ctrl-C before the relay took the signal over: as the CLI itself would exit
        os._exit(130)
    if ended_by:  # the run died of the signal we passed on (SIGTERM, SIGHUP): so do we, as a cold run would
        signal.signal(ended_by, signal.SIG_DFL)
        os.kill(os.getpid(), ended_by)
    if code is not None:
        os._exit(code)  # nothing of ours to tear down


def _hand_over(argv: list[str], directory: Path) -> tuple[int | None, int]:
    """The run's exit code from this install's server, and the signal that ended it; None: run cold, now (a server
    is started for the next run when none listens, or when the one listening was of an older build)."""
    sock = _connect(socket_path(directory))
    if sock is None:
        start_server(directory, replacing=False)
        return None, 0
    relay = launch.Relay(sock, stamp(), HANDSHAKE)
    code = relay.run(argv)
    sock.close()
    if relay.stale:  # its child saw our newer stamp and stopped it: a new one, for the next run
        start_server(directory, replacing=True)
        return None, 0
    return code, relay.ended_by


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError:  # none yet, or a dead one's socket file
        sock.close()
        return None
    return sock


def start_server(directory: Path, *, replacing: bool) -> int:
    """Start a detached server for this install unless one holds its lock (is starting or running); its pid, or 0.
    A replacement waits for the stale one to release the lock (warm.server.LOCK_WAIT)."""
    if not replacing and not _lock_free(lock_path(directory)):
        return 0
    from agentteams.settings.keyhelper import without_secrets

    env = without_secrets(os.environ)  # it needs no key or password: each run brings its own
    import agentteams

    # this install's code, wherever the launcher found it (a checkout's script directory, PYTHONPATH, a venv)
    source = os.path.dirname(os.path.dirname(agentteams.__file__))
    boot = f"import sys; sys.path.insert(0, {source!r}); from agentteams.procs.warm.server import main; main()"
    argv = [sys.executable, "-P", "-c", boot, "--dir", str(directory), "--key", install_key()]
    actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = [
        (os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)
    ]
    # an inherited descriptor (a pipe's write end, a jobserver's) held for the server's life would keep it open
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited_fds()]
    try:
        return os.posix_spawn(sys.executable, argv, env, file_actions=actions, setsid=True)
    except OSError:  # no server: every run stays cold, as with AGENTTEAMS_NO_WARM
        return 0


@dataclass(frozen=True)
class Running:
    """A warm server of this user: its pid, its install key, and whether that install is this one."""

    pid: int
    key: str
    ours: bool


def running(directory: Path | None = None) -> list[Running]:
    """This user's warm servers that hold their lock (starting or serving), this install's first."""
    directory = directory or socket_dir.private_dir()
    mine, found = install_key(), []
    for lock in sorted(directory.glob(f"{PREFIX}*.lock")):
        key = lock.name[len(PREFIX) : -len(".lock")]
        pid = _holder(lock)
        if pid and pid_alive(pid) and not _lock_free(lock):
            found.append(Running(pid, key, key == mine))
    return sorted(found, key=lambda r: not r.ours)


def stop_all(directory: Path | None = None) -> list[Running]:
    """Stop every warm server of this user (each install's): SIGTERM, then wait for each to go. Those stopped."""
    servers = running(directory)
    for server in servers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(server.pid, signal.SIGTERM)
    for server in servers:
        _wait_gone(server.pid, STOP_WAIT)
    return servers


def _holder(lock: Path) -> int:
    """The pid a server wrote in the lock file (0: none)."""
    try:
        return int(lock.read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


def _wait_gone(pid: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while pid and pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(RETRY_INTERVAL)


def _lock_free(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases our probe's lock
    return True


def _inherited_fds() -> list[int]:
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return []
    out = []
    for fd in fds:
        with contextlib.suppress(OSError):
            if fd > 2 and os.get_inheritable(fd):
                out.append(fd)
    return out
