"""The fork server as its tests run it: started on a short private directory with a key only it has, the hooks its
forked child runs instead of the CLI (launch.TEST_ENTRY_VAR), and a launcher started with a teammate's command line
and read to its end. The module-scoped `server` fixture is in tests/procs/conftest.py."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentteams.procs import launcher as launch
from agentteams.procs.fork.client import ForkServer
from tests.support.cli import Cli
from tests.support.procs import child_env, pid_alive

ROOT = Path(__file__).resolve().parents[2]
TEAMMATE = ["--agent-id", "x@t", "--agent-name", "x", "--team-name", "t", "--agent-color", "blue",
            "--parent-session-id", "S"]  # fmt: skip
SERVER_KEY = "sk-ant-test-server-only-0123456789"
HOOK = f"{__name__}:"  # the child imports this module (PYTHONPATH=ROOT in the server's env) and runs a hook below


def http_library_loaded() -> bool:
    """Whether this process has the model client's wire loaded and its CA store read: a warmed fork server's child
    has."""
    first_party = sys.modules.get("agentteams.model.first_party")
    return "agentteams.model.http_wire" in sys.modules and getattr(first_party, "_SSL_CONTEXT", None) is not None


# -- hooks the forked child runs instead of the CLI (launch.TEST_ENTRY_VAR) --------------------------------


def hook_report() -> None:
    """Read one stdin line, print what this teammate process sees as JSON, exit with $FS_EXIT."""
    line = sys.stdin.readline()
    info = {
        "pid": os.getpid(), "ppid": os.getppid(), "sid": os.getsid(0), "argv": sys.argv, "cwd": os.getcwd(),
        "stdin": line, "warm_http": http_library_loaded(), "only": os.environ.get("FS_LAUNCHER_ONLY"),
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


def short_private_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="fst-", dir="/tmp"))  # 0700, and short enough for AF_UNIX paths


def server_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TMUX", "ANTHROPIC_"))}
    env["PYTHONPATH"] = str(ROOT)
    env["ANTHROPIC_API_KEY"] = SERVER_KEY
    return env


def start_server(directory: Path) -> ForkServer:
    server = ForkServer.start(server_env(), directory=directory)
    assert server.wait_ready(120), f"fork server not ready: {server.error}"
    return server


def launcher_env(config_root: Path, fs: ForkServer | None, hook: str | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in child_env(config_root).items() if not k.startswith("ANTHROPIC_")}
    if fs is not None:
        env.update(fs.env())
    if hook:
        env[launch.TEST_ENTRY_VAR] = HOOK + hook
    env.update(extra)
    return env


def launch_teammate(cli: Cli, env: dict[str, str], cwd: Path, *args: str) -> subprocess.Popen[str]:
    """`agentteams <teammate flags> ARGS`: the launcher, which hands the teammate to a fork server if it can."""
    pipe = subprocess.PIPE
    return cli.popen(*TEAMMATE, *args, env=env, cwd=cwd, stdin=pipe, stdout=pipe, stderr=pipe)


def read_line(proc: subprocess.Popen[str], timeout: float = 30) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no line from the launcher in time"
    return proc.stdout.readline()


def finish(proc: subprocess.Popen[str], stdin: str = "", timeout: float = 30) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    assert "Traceback" not in out + err, err
    return proc.returncode, out, err


def gone(pid: int) -> bool:
    return not pid_alive(pid)


def zombies_of(ppid: int) -> list[int]:
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
