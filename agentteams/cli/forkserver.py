"""The fork server: a warm process (SDK imported) that forks a teammate per launcher connection; its child set-up.

The lead's handle is `agentteams.cli.forkclient.ForkServer`; the launcher side is `agentteams.cli.launch`.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import importlib
import io
import os
import random
import selectors
import signal
import socket
import stat
import struct
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NoReturn

from agentteams.cli import launch
from agentteams.errors import AgentTeamsError
from agentteams.model.providers import AWS_KEYS

# the SDK's own modules are model/'s to name and import: `_preimport` calls anthropic_client.warm_up()
PREIMPORTS = ("agentteams.model.anthropic_client", "agentteams.cli.agent_cmd", "typer", "rich", "agentteams.ui.console")
OPTIONAL_PREIMPORTS = (
    "agentteams.team.teammate", "agentteams.agent.session", "agentteams.cli.headless", "agentteams.store.watch",
    "agentteams.team.delivery", "agentteams.cli.teammate_run", "agentteams.cli.render", "agentteams.tools.registry",
    "agentteams.store.mailbox", "agentteams.store.tasks", "agentteams.store.presence", "agentteams.store.files",
    "agentteams.backends.tmux", "portalocker", "inotify_simple", "agentteams.store.signing",
    "agentteams.team.trust", "cryptography.hazmat.primitives.asymmetric.ed25519", "cryptography.exceptions",
)  # fmt: skip
SECRET_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
# credentials that go together: a pane with one of a group keeps its own, one with none gets the server's
CREDENTIAL_GROUPS = (SECRET_KEYS, AWS_KEYS, ("AWS_BEARER_TOKEN_BEDROCK",))
REQUEST_TIMEOUT = 10.0  # a connected client that sends nothing only ties up its own forked child, this long
SUN_PATH_MAX = 107  # bytes in an AF_UNIX path, without the terminating NUL
LONGEST_NAME = "fs-4194304.sock"  # Linux's largest pid
STOP_WAIT = 1.0


class ForkServerError(AgentTeamsError):
    """A fork server that cannot be started: an unsafe socket directory, a path too long."""


def private_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_RUNTIME_DIR/agentteams` or `/tmp/agentteams-<uid>`, created 0700 and checked to be ours alone."""
    env = os.environ if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR", "")
    candidates = [Path(runtime) / "agentteams"] if runtime and os.path.isdir(runtime) else []
    candidates.append(Path(f"/tmp/agentteams-{os.getuid()}"))
    for path in candidates:
        if len(os.fsencode(path / LONGEST_NAME)) <= SUN_PATH_MAX:
            return ensure_private(path)
    raise ForkServerError(f"no socket directory short enough for AF_UNIX ({SUN_PATH_MAX} bytes): {candidates[0]}")


def ensure_private(path: Path) -> Path:
    """Create `path` mode 0700, or check an existing one is a real directory owned by us with no group/other bits."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        found = f"{stat.filemode(st.st_mode)} owner {st.st_uid}"
        raise ForkServerError(f"refusing socket directory {path}: {found}; need a directory of ours, mode 0700")
    return path


def _preimport() -> None:
    for name in PREIMPORTS:
        importlib.import_module(name)
    for name in OPTIONAL_PREIMPORTS:
        with contextlib.suppress(Exception):  # only a warm-up: a child imports a broken module itself, and says so
            importlib.import_module(name)
    from agentteams.model.anthropic_client import warm_up

    warm_up()
    if threading.active_count() != 1:  # forking a process with other threads can deadlock its children
        names = ", ".join(t.name for t in threading.enumerate() if t is not threading.main_thread())
        raise ForkServerError(f"pre-imports started threads ({names}); a fork server must stay single-threaded")


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


class _Server:
    """Single-threaded accept loop: fork a child per connection, reap children, stop when the lead goes away."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stopping = False
        self.sel = selectors.DefaultSelector()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.wake_r, self.wake_w = os.pipe()
        self.inode = 0

    def bind(self) -> None:
        if self.path.is_socket():  # our pid is in the name: an old file of that name is a dead server's
            self.path.unlink()
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
        self.sel.register(0, selectors.EVENT_READ, self._lead)
        self.sel.register(self.wake_r, selectors.EVENT_READ, self._signalled)

    def serve(self) -> None:
        try:
            while not self.stopping:
                for key, _ in self.sel.select():
                    key.data()
        finally:
            self.close()

    def close(self) -> None:
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
            with contextlib.suppress(OSError):  # cannot fork: closing makes the launcher start cold
                if os.fork() == 0:
                    _child(conn, self._drop)
            conn.close()

    def _drop(self) -> None:
        """In a child: let go of everything that is the server's."""
        signal.set_wakeup_fd(-1)
        self.sel.close()
        self.listener.close()
        os.close(self.wake_r)
        os.close(self.wake_w)


def _child(conn: socket.socket, drop: Callable[[], None]) -> NoReturn:
    """Become the launcher's teammate and run the CLI; never returns into the server's loop."""
    code = 1
    try:
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        drop()
        request, fds = launch.read_request(conn, REQUEST_TIMEOUT)
        for target, fd in enumerate(fds):  # received fds are >= 3: the server always holds 0, 1 and 2
            os.dup2(fd, target)
            os.close(fd)
        _become(request)
        entry = _entry()
        conn.sendall(launch.FRAME.pack(b"P", os.getpid()))
        done = threading.Event()
        threading.Thread(target=_watch_launcher, args=(conn, done), name="launcher-watch", daemon=True).start()
        code = _run(entry)
        _shutdown()
        done.set()
        conn.sendall(launch.FRAME.pack(b"X", code))
    except BaseException as e:  # before the pid frame: the launcher starts cold; after: it sees our code
        if os.environ.get("AGENTTEAMS_DEBUG"):
            os.write(2, f"agentteams: fork server child: {type(e).__name__}: {e}\n".encode())
    finally:
        os._exit(code)


def _become(request: launch.Request) -> None:
    """Take on the launcher's session, directory, umask, environment and argv."""
    os.setsid()
    os.chdir(request.cwd)
    os.umask(request.umask)
    env = request.env
    secrets = carried_credentials(env, os.environ)
    os.environ.clear()
    os.environ.update(env)
    os.environ.update(secrets)
    os.environ.pop(launch.ENV_VAR, None)  # our CLI must run here, not launch yet another child
    time.tzset()
    random.seed()  # else every teammate would draw the server's random sequence
    sys.argv = request.argv
    _reopen_stdio()
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


def _reopen_stdio() -> None:
    """Fresh sys.stdin/stdout/stderr on the adopted fds, buffered as Python would for what they are (tty or not)."""
    encoding, _, errors = os.environ.get("PYTHONIOENCODING", "").partition(":")
    encoding = encoding or (sys.__stdout__.encoding if sys.__stdout__ else "utf-8")
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))

    def text(fd: int, errors: str, line: bool) -> io.TextIOWrapper:
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        buffer = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        return io.TextIOWrapper(buffer, encoding, errors, line_buffering=line, write_through=unbuffered and fd > 0)

    sys.stdin = text(0, errors or "strict", False)
    sys.stdout = text(1, errors or "strict", os.isatty(1))
    sys.stderr = text(2, "backslashreplace", True)


def _entry() -> Callable[[], object]:
    """The CLI's main, or (test hook, honoured only when set) the `module:function` in TEST_ENTRY_VAR."""
    module, _, name = os.environ.pop(launch.TEST_ENTRY_VAR, "agentteams.cli:main").partition(":")
    entry: Callable[[], object] = getattr(importlib.import_module(module), name)
    return entry


def _run(entry: Callable[[], object]) -> int:
    try:
        entry()
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return (e.code or 0) & 0xFF
        print(e.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BaseException as e:
        print(f"agentteams: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 70
    return 0


def _shutdown() -> None:
    """What interpreter exit would do: wait for non-daemon threads, run atexit handlers, flush stdio."""
    for t in threading.enumerate():
        if t is not threading.current_thread() and not t.daemon:
            t.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()


def _watch_launcher(conn: socket.socket, done: threading.Event) -> None:
    """EOF from the launcher (pane killed, launcher SIGKILLed): end as a hung-up process would."""
    with contextlib.suppress(OSError):
        while conn.recv(4096):
            pass  # the launcher sends nothing after its request
    if not done.is_set():
        os.kill(os.getpid(), signal.SIGHUP)


def main(argv: list[str] | None = None) -> None:
    """`python -m agentteams.cli.forkserver [--dir DIR | --socket PATH]`: pre-import, listen, print `ready`."""
    parser = argparse.ArgumentParser(prog="python -m agentteams.cli.forkserver")
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
        _preimport()  # before listening: a launcher that finds no socket yet waits while our pid lives
        server = _Server(path)
        server.bind()
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
