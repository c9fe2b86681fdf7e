"""The per-user warm `-p` server, launcher side: hand this `-p` run to it, or start one for the next run.

Cheap stdlib imports only: what the server saves is the SDK's import (~1.7 s). The server is
`agentteams.procs.warm.server`; the wire protocol is `launch`'s, plus a build stamp and a go-ahead.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import sys
import time
from collections.abc import Collection
from pathlib import Path

from agentteams.errors import AgentTeamsError
from agentteams.pids import pid_alive
from agentteams.procs import launcher as launch
from agentteams.procs import socket_dir

DISABLE_VAR = "AGENTTEAMS_NO_WARM"  # set (non-empty): every `-p` run starts cold and no server is started
IDLE_VAR = "AGENTTEAMS_WARM_IDLE"  # seconds the server waits for a next run before it exits
IDLE_DEFAULT = 600.0
SOCKET, LOCK = "warm.sock", "warm.lock"
HANDSHAKE = 2.0  # a server that has not forked a child for us by then is hung: run cold (the child never runs)
STARTING_WAIT = 8.0  # a server starts in ~2 s (a cold run takes longer): one not listening by then, run cold
STOP_WAIT = 3.0  # a server of another build exits at once when told: wait this long at most for it to go
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
    python = f"{sys.executable} {sys.version_info[:3]} utf8={sys.flags.utf8_mode}"
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
    """The run's exit code from the server (started here when none runs: its start costs less than a cold run's,
    which it would slow down besides), and the signal that ended it; None: run cold."""
    mine, replacing = stamp(), False
    for _ in range(2):  # a server of another build is stopped (by its child that saw our stamp) and replaced, once
        sock = None if replacing else _connect(directory / SOCKET)
        sock = sock or _start(directory, replacing=replacing)
        if sock is None:
            return None, 0
        relay = launch.Relay(sock, mine, HANDSHAKE)
        code = relay.run(argv)
        sock.close()
        if not relay.stale:
            return code, relay.ended_by
        replacing = True
    return None, 0


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError:  # none yet, or a dead one's socket file
        sock.close()
        return None
    return sock


def _start(directory: Path, *, replacing: bool) -> socket.socket | None:
    """Start a server unless one is starting already, and wait for it to listen; None when nobody starts one."""
    lock = directory / LOCK
    if replacing:  # let the stopping one go first: its socket must not take our request
        _wait_gone(_holder(lock), STOP_WAIT)
    spawned = start_server(directory, replacing=replacing)
    deadline = time.monotonic() + STARTING_WAIT
    while time.monotonic() < deadline:
        sock = _connect(directory / SOCKET)
        if sock is not None:
            return sock
        if not (spawned and pid_alive(spawned)) and _lock_free(lock):
            return None  # ours lost a race and the winner died, or ours failed: nobody is starting one
        time.sleep(RETRY_INTERVAL)
    return None


def start_server(directory: Path, *, replacing: bool) -> int:
    """Start a detached server unless one holds the lock (is starting or running); its pid, or 0."""
    if not replacing and not _lock_free(directory / LOCK):
        return 0
    from agentteams.settings.keyhelper import without_secrets

    env = without_secrets(os.environ)  # it needs no key or password: each run brings its own
    argv = [sys.executable, "-P", "-m", "agentteams.procs.warm.server", "--dir", str(directory)]
    actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = [
        (os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)
    ]
    # an inherited descriptor (a pipe's write end, a jobserver's) held for the server's life would keep it open
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited_fds()]
    try:
        return os.posix_spawn(sys.executable, argv, env, file_actions=actions, setsid=True)
    except OSError:  # no server: every run stays cold, as with AGENTTEAMS_NO_WARM
        return 0


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
