"""The pane's lean teammate launcher: `python -S panelaunch.py PROGRAM ARGS...` is `launch.Relay` with C modules only
(~10 ms to running, not ~35): it imports nothing of agentteams, so the wire format is written out here (tests hold the
two alike). Without a fork server it execs PROGRAM ARGS, a cold start."""

import _json  # C encoder only: `json` would import `re` (~6 ms)
import _signal  # type: ignore[import-not-found]  # not `signal`: it imports `enum` (~3 ms)
import _socket  # not `socket`: it imports `selectors` and `enum` (~8 ms)
import _struct
import os
import sys
import time

ENV_VAR = "AGENTTEAMS_FORKSERVER"  # launch.ENV_VAR
FALLBACK_VAR = "AGENTTEAMS_FORKSERVER_FALLBACK"  # launch.FALLBACK_VAR: the server, when ENV_VAR is a teammate's
CONNECT_WAIT = 5.0  # launch.CONNECT_WAIT: how long a server that is still starting (its pid alive) is awaited
RETRY_INTERVAL = 0.01
WAITING = (2, 111, 11)  # ENOENT, ECONNREFUSED, EAGAIN: the server binds only once its imports are done
FORWARDED = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP, _signal.SIGWINCH)
DIED_CODE = 137
_child = 0
_signals: list[int] = []


def _alive(pid: int) -> bool:
    """pids.pid_alive, without its import: a zombie counts as dead."""
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[:1] != [b"Z"]
    except PermissionError:
        return True
    except OSError:
        return False


def _pid_of(path: str) -> "int | None":
    """launch.server_pid: the pid in an `fs-<pid>.sock` name (the server's, or an early teammate's own)."""
    name = os.path.basename(path)
    digits = name[3:-5] if name.startswith("fs-") and name.endswith(".sock") else ""
    return int(digits) if digits.isdigit() else None


def _connect(path: str) -> "_socket.socket | None":
    """launch._connect: the server's connection; None when there is none (then start cold)."""
    pid = _pid_of(path)
    deadline = time.monotonic() + CONNECT_WAIT
    while True:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except (OSError, ValueError) as e:
            sock.close()
            starting = isinstance(e, OSError) and e.errno in WAITING and pid is not None and _alive(pid)
            if not starting or time.monotonic() > deadline:
                return None
            time.sleep(RETRY_INTERVAL)


def _request(argv: list[str]) -> bytes:
    """launch.Relay._send's payload, byte for byte: `json.dumps` of {argv, env, cwd, umask} behind its length."""
    enc = _json.encode_basestring_ascii
    umask = os.umask(0o022)
    os.umask(umask)
    env = ", ".join(f"{enc(k)}: {enc(v)}" for k, v in os.environ.items())
    text = f'{{"argv": [{", ".join(map(enc, argv))}], "env": {{{env}}}, "cwd": {enc(os.getcwd())}, "umask": {umask}}}'
    data = text.encode()
    return _struct.pack("!I", len(data)) + data


def _forward(signum: int, frame: object) -> None:
    if signum != _signal.SIGWINCH:
        _signals.append(signum)
    if _child:
        _kill(signum)


def _kill(signum: int) -> None:
    try:
        os.kill(_child, signum)
    except ProcessLookupError:  # already gone: its exit (or EOF) is on its way (no contextlib: one import less)
        return


def _frame(sock: "_socket.socket") -> "tuple[bytes, int] | None":
    data = b""
    while len(data) < 5:
        try:
            chunk = sock.recv(5 - len(data))
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    tag, value = _struct.unpack("!ci", data)
    return tag, value


def relay(sock: "_socket.socket", argv: list[str]) -> "int | None":
    """launch.Relay.run: the teammate's exit code; None when no child started (then start cold)."""
    global _child
    try:
        data = _request(argv)
        rights = _struct.pack("3i", 0, 1, 2)  # the child adopts our very stdin/stdout/stderr
        sent = sock.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        if sent < len(data):
            sock.sendall(data[sent:])
    except (OSError, ValueError):
        return None
    for signum in FORWARDED:
        _signal.signal(signum, _forward)
    frame = _frame(sock)
    if frame is None or frame[0] != b"P":
        if _signals:
            return 128 + _signals[-1]
        for signum in FORWARDED:  # starting cold: the exec'd program takes its signals itself
            _signal.signal(signum, _signal.SIG_DFL if signum != _signal.SIGINT else _signal.default_int_handler)
        return None
    _child = frame[1]
    for pending in _signals:  # arrived before we knew whom to tell
        _kill(pending)
    frame = _frame(sock)
    if frame is not None and frame[0] == b"X":
        return frame[1]
    if _signals:
        return 128 + _signals[-1]
    os.write(2, f"agentteams: error: the teammate process (pid {_child}) died without an exit status\n".encode())
    return DIED_CODE


def _gone_before_attach(path: str) -> None:
    """The early teammate's socket is there and nobody answers on it: it died (killed, crashed) before we attached.
    Its pane ends with that, so its lead sees a death; starting another in its place would hide it, and would run it
    twice should the first still live. (One that gave up waiting for us removed its socket: we start it anew.)"""
    pid = _pid_of(path) or "?"
    os.write(2, f"agentteams: error: the teammate process (pid {pid}) ended before its pane attached\n".encode())
    try:  # noqa: SIM105  (no contextlib: one import less)
        os.unlink(path)  # what it would have removed itself
    except OSError:
        pass
    os._exit(DIED_CODE)


def main() -> None:
    argv = sys.argv[1:]
    if not argv:
        os.write(2, b"usage: python -S panelaunch.py PROGRAM [ARGS...]\n")
        os._exit(2)
    try:
        with open("/proc/self/comm", "wb") as f:
            f.write(b"agentteams")  # what ps and tmux show for the pane's process, as for the console script
    except OSError:
        pass
    for var in (ENV_VAR, FALLBACK_VAR):  # a teammate started before its pane, else the server (ours is niced)
        path = os.environ.get(var)
        try:
            sock = _connect(path) if path else None
        except KeyboardInterrupt:
            os._exit(130)
        if sock is None and path and var == ENV_VAR and os.environ.get(FALLBACK_VAR) and os.path.exists(path):
            _gone_before_attach(path)  # ENV_VAR names an early teammate's own socket only beside a FALLBACK_VAR
        if sock is not None:
            code = relay(sock, argv)
            if code is not None:
                os._exit(code)
            sock.close()
            if var == ENV_VAR and os.environ.get(FALLBACK_VAR):  # it took our connection and died before its pid
                _gone_before_attach(path or "")
    env = {k: v for k, v in os.environ.items() if k not in (ENV_VAR, FALLBACK_VAR)}  # no second wait for a server
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as e:
        os.write(2, f"agentteams: error: cannot run {argv[0]}: {e.strerror}\n".encode())
        os._exit(127)


if __name__ == "__main__":
    main()
