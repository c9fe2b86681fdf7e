"""The warm `-p` server: the fork server's loop (warmed, a child per run) run detached, one per user and install (a
lock), until idle or until a launcher of a newer build stops it. Launcher side: `agentteams.procs.warm.client`."""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import gc
import os
import signal
import sys
import time
from pathlib import Path

from agentteams.procs.fork import server as forkserver
from agentteams.procs.socket_dir import ensure_private
from agentteams.procs.warm import client as warm

LOCK_WAIT = 3.0  # a server being replaced releases the lock as it exits (SIGTERM from a stale-stamp child)
RETRY_INTERVAL = 0.02


def take_lock(path: Path, wait: float) -> int | None:
    """The lock file's descriptor, locked for our life (its pid written in it); None when another server keeps it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                return None
            time.sleep(RETRY_INTERVAL)
            continue
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return fd


def idle_seconds(env: dict[str, str] | None = None) -> float:
    """`AGENTTEAMS_WARM_IDLE` (seconds), else the default; a bad value is the default."""
    raw = (os.environ if env is None else env).get(warm.IDLE_VAR, "")
    with contextlib.suppress(ValueError):
        if float(raw) > 0:
            return float(raw)
    return warm.IDLE_DEFAULT


def main(argv: list[str] | None = None) -> None:
    """`python -m agentteams.procs.warm.server --dir DIR --key KEY`: lock, pre-import, listen on DIR/warm-KEY.sock
    until idle."""
    parser = argparse.ArgumentParser(prog="python -m agentteams.procs.warm.server")
    parser.add_argument("--dir", required=True, help="the private socket directory")
    parser.add_argument("--key", required=True, help="the install it serves (warm.client.install_key)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # detached: SIGTERM, idleness or a newer build stop us
    os.chdir("/")  # hold no user directory busy
    directory = ensure_private(Path(args.dir))
    lock = take_lock(warm.lock_path(directory, args.key), LOCK_WAIT)
    if lock is None:
        sys.exit(0)  # another launcher's server won the race: one per user
    stamp = warm.stamp()  # before the imports: code changed while importing makes us stale, never wrongly current
    forkserver.preimport()
    policy = forkserver.ChildPolicy(stamp=stamp, lend_secrets=False, entry="agentteams.cli:run")
    server = forkserver.Server(warm.socket_path(directory, args.key), policy, idle_seconds())
    server.private_fds.append(lock)
    server.bind()  # a socket file there is a dead server's: we hold the lock
    gc.collect()
    gc.freeze()  # keep the warm heap out of the collector's way, so children share its pages longer
    server.serve()


if __name__ == "__main__":
    main()
