"""The fork server: a warm process (SDK imported) that forks a teammate per launcher connection; its child set-up.

The lead's handle is `procs.fork.client.ForkServer`; the launcher side is `procs.launcher`. The warm `-p` server
(`procs.warm.server`) runs the same loop with a `ChildPolicy` of its own.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import io
import os
import random
import selectors
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from agentteams.model.providers import AWS_KEYS
from agentteams.procs import launcher as launch
from agentteams.procs import socket_dir
from agentteams.procs.fork import early as forkearly
from agentteams.procs.fork.child import Launcher, run, shutdown, watch_launcher
from agentteams.procs.fork.spare import Spare
from agentteams.procs.socket_dir import ForkServerError, ensure_private, private_dir
from agentteams.store.redis.connection import STORE_SECRET_VARS

# the SDK's own modules are model/'s to name and import: `preimport` calls anthropic_client.warm_up()
PREIMPORTS = (
    "agentteams.model.anthropic_client",
    "agentteams.cli.commands.agent",
    "typer",
    "rich",
    "agentteams.ui.console",
)
OPTIONAL_PREIMPORTS = (
    "agentteams.team.teammate.runtime", "agentteams.agent.session", "agentteams.run.headless", "agentteams.run.agent",
    # a warm `-p` run's lead (the teammate runtime no longer drags the lead's modules in through an import circle)
    "agentteams.run.lead_setup",
    "agentteams.store.fs.watch",
    "agentteams.team.delivery", "agentteams.run.teammate", "agentteams.ui.pane", "agentteams.tools.registry",
    "agentteams.store.file.mailbox", "agentteams.store.file.tasks", "agentteams.store.presence",
    "agentteams.store.file.store", "agentteams.backends.tmux", "portalocker", "inotify_simple",
    "agentteams.store.signing",
    "agentteams.team.trust", "cryptography.hazmat.primitives.asymmetric.ed25519", "cryptography.exceptions",
    # what each teammate still imported itself on its way to its first request (~3 ms): its CLI's settings and
    # resume flags, click's decorators, the codecs its first request's URL and headers are encoded with
    "agentteams.run.session_choice", "agentteams.settings.load", "agentteams.settings.keyhelper",
    "agentteams.ui.picker", "agentteams.cli.root_argv",  # its command line, read without typer (cli/root_argv.py)
    "typer._click.decorators", "encodings.idna", "encodings.ascii",
)  # fmt: skip
SECRET_KEYS = launch.SECRET_KEYS
# credentials that go together: a pane with one of a group keeps its own, one with none gets the server's
CREDENTIAL_GROUPS = (SECRET_KEYS, AWS_KEYS, ("AWS_BEARER_TOKEN_BEDROCK",), STORE_SECRET_VARS)
CREDENTIALS = frozenset(k for group in CREDENTIAL_GROUPS for k in group)
WARM_UP = "agentteams.cli:warm_up"  # run once before forking (the entry points are strings too)
REQUEST_TIMEOUT = 10.0  # a connected client that sends nothing only ties up its own forked child, this long
STOP_WAIT = 1.0


@dataclass(frozen=True)
class ChildPolicy:
    """How a forked child takes a request: as a teammate of the lead's (the default), or as a warm `-p` run."""

    stamp: str | None = None  # the warm server's build stamp: a request with another is refused, and we stop
    lend_secrets: bool = True  # add the server's API key when the request's environment has none (teammates)
    entry: str = "agentteams.cli:start"  # not main: the child reports its own exit status (fork/child.py)


TEAMMATE = ChildPolicy()


def preimport() -> None:
    for name in PREIMPORTS:
        importlib.import_module(name)
    for name in OPTIONAL_PREIMPORTS:
        with contextlib.suppress(Exception):  # only a warm-up: a child imports a broken module itself, and says so
            importlib.import_module(name)
    from agentteams.model.anthropic_client import warm_up
    from agentteams.model.rehearsal import rehearse
    from agentteams.store.signing import warm_up as warm_signing

    module, _, function = WARM_UP.partition(":")
    getattr(importlib.import_module(module), function)()  # the CLI's own warm-up: it is above us, named by string

    warm_up()
    with contextlib.suppress(Exception):  # a faster first request (and signature check) in each child
        rehearse()
        warm_signing()
    if threading.active_count() != 1:  # forking a process with other threads can deadlock its children
        names = ", ".join(t.name for t in threading.enumerate() if t is not threading.main_thread())
        raise ForkServerError(f"pre-imports started threads ({names}); a fork server must stay single-threaded")


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


class Server:
    """Single-threaded accept loop: fork a child per connection, reap children, stop when the lead goes away (a
    teammates' server) or after `idle` seconds without a connection (the warm `-p` server)."""

    def __init__(self, path: Path, policy: ChildPolicy = TEAMMATE, idle: float | None = None) -> None:
        self.path = path
        self.policy = policy
        self.idle = idle  # stop after this many seconds without a connection; None: when the lead goes (stdin EOF)
        self.last = time.monotonic()
        self.stopping = False
        self.sel = selectors.DefaultSelector()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.wake_r, self.wake_w = os.pipe()
        self.inode = 0
        self.private_fds: list[int] = []  # the owner's descriptors a child must not keep open (a lock)
        self.spare: Spare | None = None  # a child forked ahead of the next connection (teammates' server)

    def bind(self) -> None:
        if self.path.is_socket():  # our pid is in the name (or the warm server's lock is ours): a dead server's file
            self.path.unlink()
        socket_dir.sweep_dead(self.path.parent)  # killed servers' sockets: nothing else would ever remove them
        old = os.umask(0o077)
        try:
            self.listener.bind(str(self.path))
        finally:
            os.umask(old)
        self.inode = os.stat(self.path).st_ino
        self.listener.listen(128)
        self.listener.setblocking(False)
        for fd in (self.wake_r, self.wake_w):
            os.set_blocking(fd, False)
        # SIGCHLD wakes the selector through the wakeup fd; a Python-level handler is needed for that to fire
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGHUP, self._stop)
        self.sel.register(self.listener, selectors.EVENT_READ, self._accept)
        if self.idle is None:
            self.sel.register(0, selectors.EVENT_READ, self._lead)
        self.sel.register(self.wake_r, selectors.EVENT_READ, self._signalled)

    def serve(self) -> None:
        try:
            while not self.stopping:
                timeout = None if self.idle is None else self.last + self.idle - time.monotonic()
                if timeout is not None and timeout <= 0:
                    break
                due = self.spare.due() if self.spare is not None else None
                for key, _ in self.sel.select(timeout if due is None else min(due, timeout or due)):
                    key.data()
                if self.spare is not None and self.spare.due() == 0 and not self.stopping:
                    self._fill(self.spare)
        finally:
            self.close()

    def close(self) -> None:
        if self.spare is not None:
            self.spare.close()
        self.sel.close()
        self.listener.close()
        with contextlib.suppress(FileNotFoundError):
            if os.stat(self.path).st_ino == self.inode:  # still ours: not a newer server's of the same name
                self.path.unlink()
        _reap()

    def _stop(self, signum: int, frame: object) -> None:
        self.stopping = True

    def _lead(self) -> None:
        with contextlib.suppress(OSError):
            if os.read(0, 4096):
                return
        self.stopping = True  # EOF on stdin: the lead is gone; forked teammates carry on without us

    def _signalled(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self.wake_r, 512):
                pass
        _reap()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:  # BlockingIOError: none left; EMFILE and the like: the launcher starts cold
                return
            # anyone who could connect would get a process holding the API key: only our own uid
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            if struct.unpack("3i", creds)[1] != os.getuid():
                conn.close()
                continue
            self.last = time.monotonic()
            with contextlib.suppress(OSError):  # cannot fork: closing makes the launcher start cold
                if os.fork() == 0:
                    _child(conn, self._drop, self.policy)
            conn.close()

    def _fill(self, spare: Spare) -> None:
        """Fork a spare and leave it the listener until it reports (forkspare.py)."""
        reports = spare.fill()
        if reports is not None:
            self.sel.unregister(self.listener)
            self.sel.register(reports, selectors.EVENT_READ, lambda: self._taken(spare, reports))

    def _taken(self, spare: Spare, reports: socket.socket) -> None:
        self.sel.unregister(reports)
        spare.taken()
        self.sel.register(self.listener, selectors.EVENT_READ, self._accept)

    def _drop(self) -> None:
        """In a child: let go of everything that is the server's."""
        signal.set_wakeup_fd(-1)
        self.sel.close()
        self.listener.close()  # never shutdown(): the socket is the server's and its spare's too, it would end theirs
        for fd in (self.wake_r, self.wake_w, *self.private_fds):
            os.close(fd)


def _child(conn: socket.socket, drop: Callable[[], None], policy: ChildPolicy) -> NoReturn:
    """Become the launcher's teammate (or warm run) and run the CLI; never returns into the server's loop."""
    code = 1
    try:
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        drop()
        entry, launcher = _take(conn, policy)
        done = threading.Event()
        threading.Thread(target=watch_launcher, args=(launcher, done), name="launcher-watch", daemon=True).start()
        code = run(entry)
        shutdown()
        done.set()
        launcher.sendall(launch.FRAME.pack(b"X", code))
    except BaseException as e:  # before the pid frame: the launcher starts cold; after: it sees our code
        if os.environ.get("AGENTTEAMS_DEBUG"):
            os.write(2, f"agentteams: fork server child: {type(e).__name__}: {e}\n".encode())
    finally:
        os._exit(code)


def _take(conn: socket.socket, policy: ChildPolicy) -> tuple[Callable[[], object], Launcher]:
    """Take on the launcher's request and stdio, and send our pid; the CLI's entry to run, and the launcher's
    connection (the lead's early start: the pane's launcher, once it attaches; see forkearly).

    A warm launcher sends its stdio only with its go-ahead, after our pid: descriptors sent to a server that never
    answers would stay in its socket's queue, and a caller reading the run's output would wait for EOF forever."""
    warm = policy.stamp is not None
    request, fds = launch.read_request(conn, REQUEST_TIMEOUT, 0 if warm else 3)
    if request.attach and not warm:  # an early start's lead goes on with our pid; its go-ahead comes meanwhile
        conn.sendall(launch.FRAME.pack(b"P", os.getpid()))
    if warm and request.stamp != policy.stamp:
        _stale(conn)
    _become(request, policy)
    entry = _entry(policy.entry)
    if not warm:
        _adopt(fds, request.stdio)
    if request.attach and not warm:
        return entry, forkearly.hold(conn, request.env.get(launch.ENV_VAR), CREDENTIALS)
    conn.sendall(launch.FRAME.pack(b"P", os.getpid()))
    if warm:
        _adopt(_await_go(conn), request.stdio)
    return entry, conn


def _adopt(fds: list[int], stdio: list[tuple[str, str]] | None) -> None:
    for target, fd in enumerate(fds):  # received fds are >= 3: the server always holds 0, 1 and 2
        os.dup2(fd, target)
        os.close(fd)
    _reopen_stdio(stdio)


def _stale(conn: socket.socket) -> NoReturn:
    """A launcher of another build (or environment) than ours: say so, and stop our server (it starts a new one)."""
    conn.sendall(launch.FRAME.pack(b"S", 0))
    os.kill(os.getppid(), signal.SIGTERM)
    raise SystemExit(1)


def _await_go(conn: socket.socket) -> list[int]:
    """A warm launcher that gave up waiting for our pid has closed and runs cold: run only on its go-ahead, which
    brings its stdin/stdout/stderr."""
    conn.settimeout(REQUEST_TIMEOUT)
    data, fds, flags, _ = socket.recv_fds(conn, 1, 3)
    if data != launch.GO or len(fds) != 3 or flags & socket.MSG_CTRUNC:
        raise SystemExit(1)
    conn.settimeout(None)
    return fds


def _become(request: launch.Request, policy: ChildPolicy) -> None:
    """Take on the launcher's session, directory, umask, environment and argv."""
    os.setsid()
    os.chdir(request.cwd)
    os.umask(request.umask)
    env = request.env
    # keys reach teammates only through the environment (the lead's, kept here); a warm -p run is lent none
    secrets = carried_credentials(env, os.environ) if policy.lend_secrets else {}
    wanted = {**env, **secrets}
    for var in (launch.ENV_VAR, launch.FALLBACK_VAR):  # our CLI must run here, not launch yet another child
        wanted.pop(var, None)
    for key in [k for k in os.environ if k not in wanted]:  # only the differences: each is a putenv (~1 ms in all)
        del os.environ[key]
    os.environ.update({k: v for k, v in wanted.items() if os.environ.get(k) != v})
    time.tzset()
    random.seed()  # else every teammate would draw the server's random sequence
    sys.argv = request.argv
    with contextlib.suppress(OSError), open("/proc/self/comm", "w", encoding="ascii") as f:
        f.write("agentteams")  # as a cold start would show in ps/top, not the server's "python"


def carried_credentials(env: Mapping[str, str], own: Mapping[str, str]) -> dict[str, str]:
    """The lead's credentials (kept in this server's environment) for a child whose pane environment `env` has
    none of that kind: keys reach teammates only through the environment, never argv."""
    carried: dict[str, str] = {}
    for group in CREDENTIAL_GROUPS:
        if not any(k in env for k in group):
            carried.update({k: own[k] for k in group if k in own})
    return carried


def _reopen_stdio(given: list[tuple[str, str]] | None) -> None:
    """Fresh sys.stdin/stdout/stderr on the adopted fds, buffered as Python would for what they are (tty or not);
    with the launcher's encodings when it sent them (a warm run: its locale may not be ours)."""
    encoding, _, errors = os.environ.get("PYTHONIOENCODING", "").partition(":")
    encoding = encoding or (sys.__stdout__.encoding if sys.__stdout__ else "utf-8")
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    codecs = given or [(encoding, errors or "strict"), (encoding, errors or "strict"), (encoding, "backslashreplace")]

    def text(fd: int, line: bool) -> io.TextIOWrapper:
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        buffer = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        enc, errs = codecs[fd]
        return io.TextIOWrapper(buffer, enc, errs, line_buffering=line, write_through=unbuffered and fd > 0)

    sys.stdin = text(0, False)
    sys.stdout = text(1, os.isatty(1))
    sys.stderr = text(2, True)


def _entry(default: str) -> Callable[[], object]:
    """The CLI's main, or (test hook, honoured only when set) the `module:function` in TEST_ENTRY_VAR."""
    module, _, name = os.environ.pop(launch.TEST_ENTRY_VAR, default).partition(":")
    entry: Callable[[], object] = getattr(importlib.import_module(module), name)
    return entry


def main(argv: list[str] | None = None) -> None:
    """`python -m agentteams.procs.fork.server [--dir DIR | --socket PATH]`: pre-import, listen, print `ready`."""
    parser = argparse.ArgumentParser(prog="python -m agentteams.procs.fork.server")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--dir", help="private socket directory; the socket is DIR/fs-<pid>.sock")
    where.add_argument("--socket", help="exact socket path")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the lead's to handle; EOF on stdin stops us
    try:
        if args.socket:
            path = Path(args.socket)
        else:
            path = (ensure_private(Path(args.dir)) if args.dir else private_dir()) / f"fs-{os.getpid()}.sock"
        preimport()  # before listening: a launcher that finds no socket yet waits while our pid lives
        server = Server(path)
        server.bind()
        server.spare = Spare(server.listener, lambda conn: _child(conn, lambda: None, TEAMMATE), server._drop)
    except Exception as e:
        print(f"agentteams forkserver: error: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
    gc.collect()
    gc.freeze()  # keep the warm heap out of the collector's way, so children share its pages longer
    os.write(1, b"ready\n")
    null = os.open(os.devnull, os.O_WRONLY)  # nobody reads our stdout or stderr now: never block on a full pipe
    for fd in (1, 2):
        os.dup2(null, fd)
    os.close(null)
    server.serve()


if __name__ == "__main__":
    main()
