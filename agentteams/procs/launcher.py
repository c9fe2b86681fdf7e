"""The teammate launcher: hands this process's stdio, argv and environment to the fork server and relays the exit.

Also the wire protocol's other end (`read_request`), and the relay the warm `-p` launcher (`warm`) uses.
Cheap stdlib imports only: a pane reaches a warm teammate fast.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import struct
import sys
import time

from agentteams.pids import pid_alive

ENV_VAR = "AGENTTEAMS_FORKSERVER"  # the fork server's socket path, set by the lead in a teammate's env
# beside ENV_VAR naming a teammate started before its pane (procs/fork/early.py): the server, should that one be gone
FALLBACK_VAR = "AGENTTEAMS_FORKSERVER_FALLBACK"
TEST_ENTRY_VAR = "AGENTTEAMS_FORKSERVER_TEST_ENTRY"  # test hook: `module:function` the child runs instead of the CLI
HEADER = struct.Struct("!I")  # launcher -> server: payload length, then the JSON payload {argv, env, cwd, umask}
FRAME = struct.Struct("!ci")  # child -> launcher: b"P" + its pid, then b"X" + its exit code (b"S": stale warm server)
GO = b"G"  # warm launcher -> child, after b"P": run (a launcher that gave up waiting closes instead, and runs cold)
CONNECT_WAIT = 5.0  # how long to wait for a server that is still starting (its pid is alive)
RETRY_INTERVAL = 0.01
MAX_REQUEST = 16 << 20
DIED_CODE = 137  # as a shell reports a SIGKILLed process
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGWINCH)
SECRET_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
_WAITING = (errno.ENOENT, errno.ECONNREFUSED, errno.EAGAIN)


def is_teammate_argv(argv: list[str]) -> bool:
    """True for a teammate's command line (`--agent-id` given): only those go through the fork server."""
    return any(a == "--agent-id" or a.startswith("--agent-id=") for a in argv[1:])


def run_if_teammate(argv: list[str]) -> None:
    """Exit with the teammate's code when the fork server ran it; return (start cold) when it cannot."""
    path = os.environ.get(ENV_VAR)
    if not path or not is_teammate_argv(argv):
        return
    try:
        sock = _connect(path)
    except KeyboardInterrupt:  # Ctrl-C while a starting server is awaited: as the CLI itself would exit
        os._exit(130)
    if sock is None:
        return
    code = Relay(sock).run(argv)
    if code is not None:
        os._exit(code)  # nothing of ours to tear down: skip the interpreter's shutdown


def server_pid(path: str) -> int | None:
    """The pid in a socket name `fs-<pid>.sock`, or None for any other name."""
    name = os.path.basename(path)
    digits = name[3:-5]
    if name.startswith("fs-") and name.endswith(".sock") and digits.isdigit():
        return int(digits)
    return None


def _connect(path: str) -> socket.socket | None:
    """A connection to the server; None when it is not there (no socket, refused, stale, starting for too long)."""
    pid = server_pid(path)
    deadline = time.monotonic() + CONNECT_WAIT
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
        except (OSError, ValueError) as e:
            sock.close()
            # the server binds only once its imports are done: wait while the process named in the path lives
            starting = isinstance(e, OSError) and e.errno in _WAITING and pid is not None and pid_alive(pid)
            if not starting or time.monotonic() > deadline:
                return None
            time.sleep(RETRY_INTERVAL)
            continue
        return sock


class Relay:
    """One request: send stdio + argv + env, then forward signals to the child and wait for its exit code.

    A warm launcher (`stamp` given) also sends its build stamp and stdio encodings, waits at most `handshake`
    seconds for the child's pid, and then gives it the go-ahead (`GO`)."""

    def __init__(self, sock: socket.socket, stamp: str | None = None, handshake: float | None = None) -> None:
        self.sock = sock
        self.stamp = stamp
        self.handshake = handshake
        self.stale = False  # the warm server was built from other code: it stops; start cold (and a new one)
        self.child = 0
        self.signals: list[int] = []
        self.ended_by = 0  # the signal we passed on that ended the child (no exit status came)

    def run(self, argv: list[str]) -> int | None:
        """The child's exit code; None when the server dropped us before a child started (then start cold)."""
        try:
            self._send(argv)
        except (OSError, ValueError):
            return None
        before = {signum: signal.signal(signum, self._forward) for signum in FORWARDED}
        self.sock.settimeout(self.handshake)
        frame = self._frame()
        self.stale = frame is not None and frame[0] == b"S"
        if frame is None or frame[0] != b"P" or not self._go():
            if self.signals:
                self.ended_by = self.signals[-1]
                return 128 + self.ended_by
            for signum, handler in before.items():  # starting cold: Ctrl-C must interrupt this process again
                if handler is not None:
                    signal.signal(signum, handler)
            return None
        self.child = frame[1]
        for pending in self.signals:  # arrived before we knew whom to tell
            self._kill(pending)
        frame = self._frame()
        if frame is not None and frame[0] == b"X":
            return frame[1]
        if self.signals:  # we passed on a signal that ended it: report as a shell would
            self.ended_by = self.signals[-1]
            return 128 + self.ended_by
        message = f"agentteams: error: the teammate process (pid {self.child}) died without an exit status\n"
        os.write(2, message.encode())
        return DIED_CODE

    def _go(self) -> bool:
        """Warm: the go-ahead, with our stdio (held back until a child answered: see forkserver._take)."""
        if self.stamp is None:
            return True
        try:
            socket.send_fds(self.sock, [GO], [0, 1, 2])
        except OSError:
            return False
        self.sock.settimeout(None)
        return True

    def _send(self, argv: list[str]) -> None:
        umask = os.umask(0o022)
        os.umask(umask)
        request: dict[str, object] = {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd(), "umask": umask}
        if self.stamp is not None:
            streams = (sys.stdin, sys.stdout, sys.stderr)
            request["stamp"] = self.stamp
            request["stdio"] = [[s.encoding, s.errors or "strict"] if s else ["utf-8", "strict"] for s in streams]
        send_request(self.sock, request, [] if self.stamp is not None else [0, 1, 2])  # the child adopts our stdio

    def _frame(self) -> tuple[bytes, int] | None:
        return read_frame(self.sock)

    def _forward(self, signum: int, frame: object) -> None:
        if signum != signal.SIGWINCH:
            self.signals.append(signum)
        if self.child:
            self._kill(signum)

    def _kill(self, signum: int) -> None:
        try:
            os.kill(self.child, signum)
        except ProcessLookupError:
            return  # already gone: its exit (or EOF) is on its way


def send_request(sock: socket.socket, request: dict[str, object], fds: list[int]) -> None:
    """One request (`read_request`'s format): its length, its JSON, and `fds` beside the first bytes."""
    payload = json.dumps(request).encode()
    data = HEADER.pack(len(payload)) + payload
    if not fds:
        sock.sendall(data)
        return
    sent = socket.send_fds(sock, [data], fds)
    if sent < len(data):  # never an empty send: the server may have answered and closed already (EPIPE)
        sock.sendall(data[sent:])


def read_frame(sock: socket.socket) -> tuple[bytes, int] | None:
    """The child's next frame (tag, value); None when the connection ends or fails first."""
    data = b""
    while len(data) < FRAME.size:
        try:
            chunk = sock.recv(FRAME.size - len(data))
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    tag, value = FRAME.unpack(data)
    return tag, value


class Request:
    """What a launcher sends besides its stdio fds: argv, environment, working directory, umask; a warm launcher's
    build stamp and stdio (encoding, errors) pairs; the lead's `attach` flag (a teammate started before its pane)."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str, umask: int) -> None:
        self.argv, self.env, self.cwd, self.umask = argv, env, cwd, umask
        self.stamp: str | None = None
        self.stdio: list[tuple[str, str]] | None = None
        self.attach = False  # the lead's early start: the pane's launcher attaches later (procs/fork/early.py)


def read_request(conn: socket.socket, timeout: float, nfds: int = 3) -> tuple[Request, list[int]]:
    """The fork server child's side of `Relay._send`: the request and the launcher's stdin/stdout/stderr fds
    (`nfds` 0: a warm launcher's, whose fds come with its go-ahead)."""
    conn.settimeout(timeout)
    data, fds, flags, _ = socket.recv_fds(conn, 65536, 3)
    if flags & socket.MSG_CTRUNC or len(fds) != nfds:
        for fd in fds:
            os.close(fd)
        raise ValueError(f"expected {nfds} file descriptors, got {len(fds)}")
    data = _fill(conn, data, HEADER.size)
    size = HEADER.unpack_from(data)[0]
    if size > MAX_REQUEST:
        raise ValueError(f"request of {size} bytes is too large")
    raw = json.loads(_fill(conn, data, HEADER.size + size)[HEADER.size : HEADER.size + size])
    conn.settimeout(None)
    argv, env, cwd, umask = (
        (raw.get(k) for k in ("argv", "env", "cwd", "umask")) if isinstance(raw, dict) else [None] * 4
    )
    if not (
        isinstance(argv, list) and all(isinstance(a, str) for a in argv)
        and isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
        and isinstance(cwd, str) and isinstance(umask, int)
    ):  # fmt: skip
        raise ValueError("malformed request")
    request = Request(argv, env, cwd, umask)
    request.stamp, request.stdio = _warm_fields(raw)
    request.attach = raw.get("attach") is True
    return request, fds


def _warm_fields(raw: dict[str, object]) -> tuple[str | None, list[tuple[str, str]] | None]:
    stamp, stdio = raw.get("stamp"), raw.get("stdio")
    pairs = stdio if isinstance(stdio, list) and len(stdio) == 3 else []
    ok = all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in pairs)
    return (stamp if isinstance(stamp, str) else None), ([(p[0], p[1]) for p in pairs] if pairs and ok else None)


def _fill(conn: socket.socket, data: bytes, size: int) -> bytes:
    while len(data) < size:
        chunk = conn.recv(65536)
        if not chunk:
            raise EOFError("the launcher closed the connection mid-request")
        data += chunk
    return data
