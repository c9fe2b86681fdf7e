"""The warm `-p` server as real processes: a warm run's output and exit code are a cold run's, each run's own
environment counts, signals reach the run, a first run (or one finding a stale socket or an other build's server)
starts a server and hands itself to it, a hung server means a cold run, racing launchers leave one server, and an
idle server exits. Every test has a runtime dir of its own
(XDG_RUNTIME_DIR), and every server a test started is gone at its end."""

from __future__ import annotations

import json
import os
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

from agentteams.mockapi import MockServer
from agentteams.procs import launcher as launch
from agentteams.procs.warm import client as warm
from tests.support.cli import Cli
from tests.support.forkserver_lab import http_library_loaded
from tests.support.procs import child_env, cmdline, pid_alive
from tests.support.repo import ROOT
from tests.support.wait import wait_until

KEY = "sk-ant-test-warm-0123456789"
HOOK = f"{__name__}:"


def hook_report() -> None:
    """What the forked run sees, as JSON on stdout (the child runs this instead of the CLI: launch.TEST_ENTRY_VAR)."""
    keys = ("CLAUDE_CONFIG_DIR", "WARM_TEST_MARK", "ANTHROPIC_API_KEY", warm.DISABLE_VAR)
    info = {"pid": os.getpid(), "ppid": os.getppid(), "cwd": os.getcwd(), "argv": sys.argv,
            "env": {k: os.environ.get(k) for k in keys}, "warm_http": http_library_loaded(),
            "stdin": sys.stdin.read()}  # fmt: skip
    print(json.dumps(info), flush=True)
    sys.exit(int(os.environ.get("WARM_TEST_EXIT", "0")))


def hook_sleep() -> None:
    """Print our pid, then wait to be signalled (or give up after a minute)."""
    print(os.getpid(), flush=True)
    time.sleep(60)


class Warm:
    """A test's own runtime dir, and the environment its `-p` runs get (warm path on)."""

    def __init__(self, runtime: Path, config_root: Path, base_url: str) -> None:
        self.runtime = runtime
        self.dir = runtime / "agentteams"
        env = {k: v for k, v in child_env(config_root).items() if not k.startswith("ANTHROPIC_")}
        env.pop(warm.DISABLE_VAR, None)
        env.update(XDG_RUNTIME_DIR=str(runtime), ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY=KEY,
                   PYTHONPATH=str(ROOT))  # fmt: skip
        self.env = env
        self.key = warm.install_key(env)  # the launchers' (same source, interpreter and baked environment)
        self.sock, self.lock = warm.socket_path(self.dir, self.key), warm.lock_path(self.dir, self.key)

    def server_pid(self) -> int | None:
        """The pid written in the lock file by the server holding it, if that process lives."""
        try:
            pid = int(self.lock.read_text().strip() or 0)
        except (OSError, ValueError):
            return None
        return pid if pid and pid_alive(pid) else None

    def servers(self) -> list[int]:
        """Every live warm server process (starting or serving) for this runtime dir; not the runs it forked, which
        share its argv until they exit."""
        found = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                argv = cmdline(int(name))
                if any("agentteams.procs.warm.server" in a for a in argv) and str(self.dir) in argv:
                    found.append(int(name))
        return [pid for pid in found if _parent(pid) not in found]

    def serving(self) -> bool:
        """A server accepts on the socket (it binds once its imports are done)."""
        return self.connects(self.sock)

    @staticmethod
    def connects(path: Path) -> bool:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            try:
                s.connect(str(path))
            except OSError:
                return False
        return True

    def wait_serving(self) -> int:
        wait_until(lambda: self.serving() and self.server_pid() is not None, 120, "the warm server to listen")
        pid = self.server_pid()
        assert pid is not None
        return pid


@pytest.fixture
def warmed(cli: Cli, config_root: Path, servers: list[MockServer]) -> Iterator[Warm]:
    server = MockServer({"fallback": "ok"})
    server.start()
    servers.append(server)
    runtime = Path(tempfile.mkdtemp(prefix="wt-", dir="/tmp"))  # short enough for AF_UNIX paths
    w = Warm(runtime, config_root, server.base_url)
    yield w
    for pid in w.servers():
        os.kill(pid, signal.SIGTERM)
    wait_until(lambda: not w.servers(), 30, "every warm server of the test to exit")
    shutil.rmtree(runtime, ignore_errors=True)


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rpartition(")")[2].split()[1])


def _imported_sdk(stderr: str) -> bool:
    """Under PYTHONPROFILEIMPORTTIME the launcher's own imports are listed: a cold run imports the model client's wire
    itself."""
    return any(line.rpartition("|")[2].strip() == "agentteams.model.http_wire" for line in stderr.splitlines())


def _run(
    cli: Cli, env: dict[str, str], *args: str, cwd: Path | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return cli("-p", *args, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, cwd=cwd, input=stdin)


VOLATILE = (
    "session_id",
    "duration_ms",
    "duration_api_ms",
    "uuid",
    "id",
    "timestamp",
    "request_id",
    "total_cost_usd",
    "usage",
    "modelUsage",
)


def _steady(data: object) -> object:
    """JSON output without what differs from run to run (ids, timings, cost), at any depth."""
    if isinstance(data, dict):
        return {k: _steady(v) for k, v in data.items() if k not in VOLATILE and not k.endswith("_ms")}  # timings
    if isinstance(data, list):
        return [_steady(v) for v in data]
    return data


FORMS = {  # argv after -p, and stdin
    "text": (["hi"], None),
    "json": (["hi", "--output-format", "json"], None),
    "stream-json": (["hi", "--output-format", "stream-json", "--verbose"], None),
    "stdin prompt": ([], "hi"),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_a_warm_run_prints_what_a_cold_run_prints(cli: Cli, warmed: Warm, tmp_path: Path, form: str) -> None:
    args, stdin = FORMS[form]
    first = _run(cli, warmed.env, *args, cwd=tmp_path, stdin=stdin)  # no server yet: starts one (test_a_stale_...)
    assert first.returncode == 0, first.stderr[-2000:]
    warmed.wait_serving()
    hot = _run(cli, warmed.env, *args, cwd=tmp_path, stdin=stdin)
    cold = _run(cli, {**warmed.env, warm.DISABLE_VAR: "1"}, *args, cwd=tmp_path, stdin=stdin)
    assert not _imported_sdk(hot.stderr), "the warm run imported the SDK itself: it ran cold"
    assert _imported_sdk(cold.stderr)
    assert hot.returncode == cold.returncode == 0
    if form == "json":  # ids, cost and timings differ from run to run: compare the rest
        assert _steady(json.loads(hot.stdout)) == _steady(json.loads(cold.stdout))
    elif form == "stream-json":
        hot_lines, cold_lines = hot.stdout.splitlines(), cold.stdout.splitlines()
        assert [_steady(json.loads(x)) for x in hot_lines] == [_steady(json.loads(x)) for x in cold_lines]
    else:
        assert hot.stdout == cold.stdout == "ok\n"


def test_a_failing_run_exits_as_a_cold_one(cli: Cli, warmed: Warm, tmp_path: Path) -> None:
    cli("-p", "hi", env=warmed.env, cwd=tmp_path)
    warmed.wait_serving()
    for env in (warmed.env, {**warmed.env, warm.DISABLE_VAR: "1"}):
        bad = _run(cli, env, "hi", "--output-format", "nonsense", cwd=tmp_path)
        assert bad.returncode == 1 and "nonsense" in bad.stderr, bad.stderr
        empty = cli("-p", "", env=env, cwd=tmp_path)
        assert empty.returncode == 1 and empty.stderr.count("\n") == 1, empty.stderr


def test_each_run_brings_its_own_environment_cwd_stdin_and_key(cli: Cli, warmed: Warm, tmp_path: Path) -> None:
    cli("-p", "hi", env=warmed.env, cwd=tmp_path)
    server = warmed.wait_serving()
    hook = {**warmed.env, launch.TEST_ENTRY_VAR: HOOK + "hook_report"}
    seen = []
    for i in range(2):
        work = tmp_path / f"w{i}"
        work.mkdir()
        env = {**hook, "CLAUDE_CONFIG_DIR": str(tmp_path / f"cfg{i}"), "WARM_TEST_MARK": str(i),
               "ANTHROPIC_API_KEY": f"{KEY}-{i}", "WARM_TEST_EXIT": str(3 + i)}  # fmt: skip
        proc = subprocess.run([*cli.argv("-p", "--model", f"m{i}")], env=env, cwd=work, input=f"prompt {i}",
                              capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert proc.returncode == 3 + i, proc.stderr
        info = json.loads(proc.stdout)
        assert info["ppid"] == server and info["warm_http"]  # forked by the warm server, its HTTP stack there
        assert info["cwd"] == str(work) and info["stdin"] == f"prompt {i}"
        assert info["argv"][1:] == ["-p", "--model", f"m{i}"]
        assert info["env"] == {"CLAUDE_CONFIG_DIR": str(tmp_path / f"cfg{i}"), "WARM_TEST_MARK": str(i),
                               "ANTHROPIC_API_KEY": f"{KEY}-{i}", warm.DISABLE_VAR: None}  # fmt: skip
        seen.append(info["pid"])
    assert len(set(seen)) == 2
    no_key = {k: v for k, v in hook.items() if k != "ANTHROPIC_API_KEY"}
    proc = subprocess.run(cli.argv("-p", "x"), env=no_key, capture_output=True, text=True, timeout=60, check=False)
    assert json.loads(proc.stdout)["env"]["ANTHROPIC_API_KEY"] is None  # never the server's or an earlier run's
    assert KEY not in Path(f"/proc/{server}/environ").read_text(errors="replace")  # the server holds no key


def test_a_real_run_reads_settings_from_its_own_config_dir(
    cli: Cli, warmed: Warm, tmp_path: Path, servers: list[MockServer]
) -> None:
    cli("-p", "hi", env=warmed.env, cwd=tmp_path)
    warmed.wait_serving()
    api = servers[0]
    for model in ("claude-warm-a", "claude-warm-b"):
        root = tmp_path / model
        root.mkdir()
        (root / "settings.json").write_text(json.dumps({"model": model}))
        proc = _run(cli, {**warmed.env, "CLAUDE_CONFIG_DIR": str(root)}, "hi", cwd=tmp_path)
        assert proc.returncode == 0 and proc.stdout == "ok\n" and not _imported_sdk(proc.stderr), proc.stderr
        bodies = [r["body"] for r in api.requests if r["path"].startswith("/v1/messages")]
        assert bodies[-1]["model"] == model


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_the_launcher_ends_the_run(cli: Cli, warmed: Warm, tmp_path: Path, signum: int) -> None:
    cli("-p", "hi", env=warmed.env, cwd=tmp_path)
    warmed.wait_serving()
    env = {**warmed.env, launch.TEST_ENTRY_VAR: HOOK + "hook_sleep"}
    proc = cli.popen("-p", "x", env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    assert child != proc.pid and pid_alive(child)
    proc.send_signal(signum)
    # as a cold run: Ctrl-C is the CLI's exit 130, SIGTERM kills it (the launcher dies of it too)
    assert proc.wait(30) == (130 if signum == signal.SIGINT else -signum)
    wait_until(lambda: not pid_alive(child), 30, "the forked run to end")


def test_the_launcher_killed_ends_the_run(cli: Cli, warmed: Warm, tmp_path: Path) -> None:
    cli("-p", "hi", env=warmed.env, cwd=tmp_path)
    warmed.wait_serving()
    env = {**warmed.env, launch.TEST_ENTRY_VAR: HOOK + "hook_sleep"}
    proc = cli.popen("-p", "x", env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    proc.kill()
    proc.wait(30)
    wait_until(lambda: not pid_alive(child), 30, "the forked run to end with its launcher")


def test_a_stale_socket_is_replaced_by_a_server_the_next_run_uses(cli: Cli, warmed: Warm, tmp_path: Path) -> None:
    warmed.dir.mkdir(mode=0o700)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(warmed.sock))  # bound, never listening, closed: a dead server's socket file
    dead.close()
    proc = _run(cli, warmed.env, "hi", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "ok\n") and "agentteams:" not in proc.stderr
    # the first run went cold at once and started a new server, which replaced the dead socket file: the next run
    # is handed to it
    warmed.wait_serving()
    again = _run(cli, warmed.env, "hi", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, "ok\n") and not _imported_sdk(again.stderr), again.stderr[-2000:]


def test_a_hung_server_runs_cold_after_a_short_wait(cli: Cli, warmed: Warm, tmp_path: Path) -> None:
    warmed.dir.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as hung:
        hung.bind(str(warmed.sock))
        hung.listen(8)  # connects succeed, nobody ever answers
        proc = _run(cli, warmed.env, "hi", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "ok\n") and _imported_sdk(proc.stderr)
    assert "agentteams:" not in proc.stderr


def _checkout(where: Path, version: str) -> list[str]:
    """A copy of this source tree at `where` (another install) whose version is `version`: the argv that runs it."""
    shutil.copytree(ROOT / "agentteams", where / "agentteams")  # compiled files too: their sources keep their times
    init = where / "agentteams" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', f'__version__ = "{version}+', 1))
    (where / "run.py").write_text("from agentteams.cli import main\n\nmain()\n")  # its directory first on sys.path
    return [sys.executable, str(where / "run.py")]


def test_two_installs_used_in_turn_never_serve_or_stop_each_other(warmed: Warm, tmp_path: Path) -> None:
    env = {k: v for k, v in warmed.env.items() if k != "PYTHONPATH"}  # the two differ in where they live alone
    installs = {name: _checkout(tmp_path / name, f"{name}1") for name in ("a", "b")}

    def run(name: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([*installs[name], "-p", "hi"], env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
                              cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert (proc.returncode, proc.stdout) == (0, "ok\n"), proc.stderr[-2000:]
        return proc

    def servers() -> dict[str, int]:
        return {s.key: s.pid for s in warm.running(warmed.dir)}

    assert _imported_sdk(run("a").stderr)  # no server yet: cold at once, one started for a
    wait_until(lambda: len(servers()) == 1, 120, "a's server")
    ((key_a, pid_a),) = servers().items()
    assert _imported_sdk(run("b").stderr)  # a's server is not b's: cold, and one started for b
    wait_until(lambda: len(servers()) == 2, 120, "b's server beside a's")
    key_b = next(k for k in servers() if k != key_a)
    pid_b = servers()[key_b]
    wait_until(lambda: warmed.connects(warm.socket_path(warmed.dir, key_b)), 120, "b's server to listen")
    for name in ("a", "b", "a", "b"):
        assert not _imported_sdk(run(name).stderr), f"{name} ran cold: its server did not take it"
    assert servers() == {key_a: pid_a, key_b: pid_b}  # neither stopped nor replaced the other's
    versions = {name: subprocess.run([*argv, "--version"], env=env, capture_output=True, text=True, timeout=60,
                                     check=True).stdout for name, argv in installs.items()}  # fmt: skip
    assert "a1" in versions["a"] and "b1" in versions["b"]


def test_an_upgrade_in_place_replaces_its_install_s_server(warmed: Warm, tmp_path: Path) -> None:
    env = {k: v for k, v in warmed.env.items() if k != "PYTHONPATH"}
    argv = _checkout(tmp_path / "app", "old")

    def run() -> str:
        proc = subprocess.run([*argv, "-p", "hi"], env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert (proc.returncode, proc.stdout) == (0, "ok\n"), proc.stderr[-2000:]
        return proc.stderr

    run()
    wait_until(lambda: len(warm.running(warmed.dir)) == 1, 120, "the server")
    (old,) = warm.running(warmed.dir)
    wait_until(lambda: warmed.connects(warm.socket_path(warmed.dir, old.key)), 120, "the server to listen")
    assert not _imported_sdk(run())
    init = tmp_path / "app" / "agentteams" / "__init__.py"
    init.write_text(init.read_text().replace('"old+', '"new+'))  # the same install, upgraded: a newer stamp
    assert _imported_sdk(run())  # the old server saw the newer stamp and stopped; this run went cold at once
    wait_until(lambda: not pid_alive(old.pid), 30, "the old build's server to stop")
    wait_until(lambda: [s.key for s in warm.running(warmed.dir)] == [old.key], 120, "a new server, same install")
    wait_until(lambda: warmed.connects(warm.socket_path(warmed.dir, old.key)), 120, "the new server to listen")
    assert not _imported_sdk(run())


def test_racing_launchers_leave_one_server(cli: Cli, warmed: Warm, tmp_path: Path) -> None:
    pipe = subprocess.PIPE
    procs = [cli.popen("-p", "hi", env=warmed.env, cwd=tmp_path, stdout=pipe, stderr=pipe) for _ in range(3)]
    outs = [(*p.communicate(timeout=120), p.returncode) for p in procs]
    assert outs == [("ok\n", "", 0)] * 3
    warmed.wait_serving()
    wait_until(lambda: len(warmed.servers()) == 1, 30, "one warm server", explain=lambda: str(warmed.servers()))
    assert warmed.servers() == [warmed.server_pid()]


def test_an_idle_server_exits_and_removes_its_socket(cli: Cli, warmed: Warm, tmp_path: Path) -> None:
    assert not warmed.lock.exists()
    cli("-p", "hi", env={**warmed.env, warm.IDLE_VAR: "1"}, cwd=tmp_path)
    # the pid it writes in its lock stays after it exits: under load a server can start and idle out between two
    # looks at the process table, so its start is read there, never from a live process
    wait_until(lambda: warmed.lock.exists() and warmed.lock.read_text().strip().isdigit(), 30, "a warm server to start")
    wait_until(lambda: not warmed.servers(), 60, "the idle server to exit")
    assert not warmed.sock.exists()


def test_disabled_starts_no_server(cli: Cli, warmed: Warm, tmp_path: Path) -> None:
    proc = cli("-p", "hi", env={**warmed.env, warm.DISABLE_VAR: "1"}, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "ok\n")
    assert not warmed.servers()
    assert not warmed.dir.exists() or not list(warmed.dir.glob(f"{warm.PREFIX}*"))


def test_only_print_runs_of_the_agent_go_warm() -> None:
    assert warm.is_print_argv(["agentteams", "-p", "hi"])
    assert warm.is_print_argv(["agentteams", "--model", "haiku", "--print", "hi"])
    assert not warm.is_print_argv(["agentteams", "hi"])
    assert not warm.is_print_argv(["agentteams", "task", "create", "t", "-p"], commands=("task",))
    assert not warm.is_print_argv(["agentteams", "--", "-p"])
    assert not warm.is_print_argv(["agentteams", "-p", "--agent-id", "a@t"])


def test_doctor_shows_this_install_s_server_and_stops_it(cli: Cli, warmed: Warm, tmp_path: Path) -> None:
    def warm_check() -> str:
        shown = json.loads(cli("doctor", "--json", env=warmed.env, cwd=tmp_path).stdout)
        return str(next(c["detail"] for c in shown["checks"] if c["name"] == "warm -p"))

    assert "no server for this install yet" in warm_check()
    cli("-p", "hi", env=warmed.env, cwd=tmp_path)
    pid = warmed.wait_serving()
    assert f"server pid {pid} serves this install" in warm_check()
    stopped = cli("doctor", "--stop-warm", env=warmed.env, cwd=tmp_path)
    assert (stopped.returncode, stopped.stdout) == (0, f"stopped 1 warm -p server(s); pid {pid}\n"), stopped.stderr
    assert not pid_alive(pid) and "no server for this install yet" in warm_check()
    off = json.loads(cli("doctor", "--json", env={**warmed.env, warm.DISABLE_VAR: "1"}, cwd=tmp_path).stdout)
    assert any(c["name"] == "warm -p" and c["detail"].startswith("off") for c in off["checks"])
