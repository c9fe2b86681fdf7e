"""The per-user warm `-p` server, launcher side: hand this `-p` run to it, or start one for the next run.

Cheap stdlib imports only: what the server saves is the SDK's import (~1.7 s). The server is
`agentteams.cli.warmserver`; the wire protocol is `launch`'s, plus a build stamp and a go-ahead.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import sys
from pathlib import Path

from agentteams.cli import launch, sockdir
from agentteams.errors import AgentTeamsError

DISABLE_VAR = "AGENTTEAMS_NO_WARM"  # set (non-empty): every `-p` run starts cold and no server is started
IDLE_VAR = "AGENTTEAMS_WARM_IDLE"  # seconds the server waits for a next run before it exits
IDLE_DEFAULT = 600.0
SOCKET, LOCK = "warm.sock", "warm.lock"
HANDSHAKE = 2.0  # a server that has not forked a child for us by then is hung: run cold (the child never runs)
# what a server process takes from its environment once, at start: a launcher with other values needs another one
BAKED_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONHASHSEED", "PYTHONWARNINGS", "SSL_CERT_FILE", "SSL_CERT_DIR",
             "LANG", "LC_ALL", "LC_CTYPE")  # fmt: skip
SUBCOMMANDS = ("team", "task", "msg", "mock-api", "status", "watch", "attach", "logs", "cleanup", "doctor", "demo",
               "config")  # fmt: skip


def is_print_argv(argv: list[str]) -> bool:
    """A `-p`/`--print` run of the agent (not a store command's, not a teammate's): only those go warm."""
    args = argv[1:]
    args = args[: args.index("--")] if "--" in args else args
    if not args or args[0] in SUBCOMMANDS or launch.is_teammate_argv(argv):
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


def run_if_print(argv: list[str]) -> None:
    """Exit with the run's code when the warm server ran it; return (run cold) when it cannot."""
    if os.environ.get(DISABLE_VAR) or not is_print_argv(argv):
        return
    try:
        directory = sockdir.private_dir()
    except (OSError, AgentTeamsError):
        return
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(directory / SOCKET))
    except OSError:  # none yet, or a dead one's socket: start one for the next run, run this one cold
        sock.close()
        start_server(directory, replacing=False)
        return
    relay = launch.Relay(sock, stamp(), HANDSHAKE)
    try:
        code = relay.run(argv)
    except KeyboardInterrupt:  # Ctrl-C before the relay took the signal over: as the CLI itself would exit
        os._exit(130)
    sock.close()
    if relay.stale:  # it stops now: start the build we are (it waits for the old one's lock)
        start_server(directory, replacing=True)
    if code is not None:
        os._exit(code)  # nothing of ours to tear down


def start_server(directory: Path, *, replacing: bool) -> None:
    """Start a detached server unless one holds the lock (is starting or running); it exits when idle."""
    if not replacing and not _lock_free(directory / LOCK):
        return
    env = {k: v for k, v in os.environ.items() if k not in launch.SECRET_KEYS}  # it needs no key: each run brings one
    argv = [sys.executable, "-P", "-m", "agentteams.cli.warmserver", "--dir", str(directory)]
    actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = [
        (os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)
    ]
    # an inherited descriptor (a pipe's write end, a jobserver's) held for the server's life would keep it open
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited_fds()]
    with contextlib.suppress(OSError):  # no server: every run stays cold, as with AGENTTEAMS_NO_WARM
        os.posix_spawn(sys.executable, argv, env, file_actions=actions, setsid=True)


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
