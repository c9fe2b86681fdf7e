"""Shared fixtures, and the test tiers: every test gets its own config root and runs outside tmux; a test that uses
a fixture starting real processes is marked with that fixture's tier (`tmux`, `proc`, `interop`), and a test
without the mark that starts one anyway fails."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.settings.trust import SANDBOXED_VAR
from agentteams.store.paths import Layout
from tests.support import realclaude, redislab
from tests.support.cli import Cli
from tests.support.lead_pane import API_KEY, LeadPane, Start
from tests.support.live_team import LiveTeam, running_team
from tests.support.procs import child_env
from tests.support.redislab import RedisServer
from tests.support.tmuxlab import Tmux
from tests.support.workers import Gate, Pool

# Every test folder is a sandbox of the test's own: sessions trust it without the workspace-trust question (Claude
# Code's own variable, honoured by both CLIs). tests/run/test_workspace_trust.py takes it away to ask the question.
os.environ[SANDBOXED_VAR] = "1"

# The tests' temporary directories (tmp_path) on tmpfs where the machine has one: the stores' atomic writes fsync
# every file, and on a disk shared with other work each fsync took ~8 ms (tests/store ran 55 s, 18 s on tmpfs). What
# the tests check is unchanged: the same calls are made, only their cost differs; the fault suite mounts its own
# small disks. An explicit PYTEST_DEBUG_TEMPROOT or --basetemp wins. A socket in tmp_path (a test's tmux.sock) stays
# well under the AF_UNIX limit: /dev/shm is 4 bytes longer than /tmp and its numbered dirs start afresh.
SHM = Path("/dev/shm")
if SHM.is_dir() and os.access(SHM, os.W_OK | os.X_OK):
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", str(SHM))

# the fixtures that start real processes, and the tier each gives the tests using them (directly or not)
TIER_OF_FIXTURE = {
    "tmux": "tmux",  # a tmux server of the test's own
    "cli": "proc",  # the CLI as a process
    "pool": "proc",  # worker interpreters
    "gate": "proc",
    "claude": "interop",  # the real Claude Code CLI
    "redis_server": "proc",  # a private redis-server (also marked `redis`)
}
TIERS = ("tmux", "proc", "interop")

# the fault suite's table (here because the xdist controller, which prints it, loads only this conftest), and the
# `solo` tests' turns under xdist
LONGEST = frozenset({"test_bench_smoke.py", "test_bench_nodes_smoke.py"})  # test modules of minutes per test
pytest_plugins = ("tests.faults.table", "tests.support.solo")


def pytest_sessionstart(session: pytest.Session) -> None:
    # a background job of a non-interactive shell (`cmd &`) starts with SIGINT ignored, and children inherit that:
    # the tests that interrupt a child (watch, logs -f, the Bash tool's agent) would wait for it in vain
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for fixture, tier in TIER_OF_FIXTURE.items():
            if fixture in used:
                item.add_marker(tier)
        if "redis_server" in used:
            item.add_marker("redis")
    # under xdist a solo test first waits for every running test to end: solo tests last, where the run drains
    # anyway, and the longest ones (the benchmarks' smoke runs, minutes each) first, so no worker waits on them late
    items.sort(key=lambda item: 2 if item.get_closest_marker("solo") else 0 if item.path.name in LONGEST else 1)


@pytest.fixture(autouse=True)
def config_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "claude"
    root.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.delenv("TMUX_PANE", raising=False)
    monkeypatch.delenv("AGENTTEAMS_TMUX_SOCKET", raising=False)
    # every `-p` child runs cold: no warm server outlives a test (tests/procs/test_warm.py turns it on, in a dir of
    # its own)
    monkeypatch.setenv("AGENTTEAMS_NO_WARM", "1")
    yield root


@pytest.fixture
def layout(config_root: Path) -> Layout:
    return Layout(config_root)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """An empty working directory for the processes a test starts (a module that needs more in it has its own)."""
    d = tmp_path / "work"
    d.mkdir()
    return d


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    """A tmux server of this test's own (not started yet); afterwards it is killed with every process it ran."""
    server = Tmux(tmp_path / "tmux.sock")
    yield server
    server.stop()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A private redis-server on a free loopback port with AOF on; stopped afterwards."""
    server = redislab.start(tmp_path / "redis")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def cli(config_root: Path) -> Iterator[Cli]:
    """`agentteams` as a real process on this test's config root, outside tmux."""
    runner = Cli(lambda: {**child_env(config_root), "PYTHONIOENCODING": "utf-8"})
    yield runner
    runner.end()


@pytest.fixture
def pool(tmp_path: Path, config_root: Path) -> Iterator[Pool]:
    """Worker processes (tests/support/workers.py) on this test's config root; killed afterwards."""
    p = Pool(tmp_path / "work", child_env(config_root))
    try:
        yield p
    finally:
        p.kill_all()


@pytest.fixture
def gate(tmp_path: Path, config_root: Path) -> Iterator[Gate]:
    """Worker processes released all at once; killed afterwards."""
    g = Gate(tmp_path / "work", child_env(config_root))
    try:
        yield g
    finally:
        g.kill_all()


@pytest.fixture(params=realclaude.VERSIONS, ids=[f"cc{v}" for v in realclaude.VERSIONS])
def claude_version(request: pytest.FixtureRequest) -> str:
    """Each pinned Claude Code version in turn (a test for one only parametrizes `claude_version` itself)."""
    version: str = request.param
    return version


@pytest.fixture
def claude(claude_version: str) -> Path:
    """The real Claude Code CLI of `claude_version` (installed on first use): never skipped."""
    return realclaude.claude_bin(claude_version)


@pytest.fixture
def live_team(tmux: Tmux, cli: Cli, config_root: Path, tmp_path: Path) -> Iterator[LiveTeam]:
    """A lead and alice in `tmux`, alice held mid-turn on task #1 (tests/support/live_team.py)."""
    with running_team(tmux, cli, config_root, tmp_path) as team:
        yield team


# -- the guard: an unmarked test must not start what its tier's fixtures start ---------------------------

_tiers_now: set[str] | None = None  # the tiers of the test running now; None between tests


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    global _tiers_now
    _tiers_now = {tier for tier in TIERS if item.get_closest_marker(tier) is not None}
    try:
        return (yield)
    finally:
        _tiers_now = None


def _needs_tier(argv: list[str]) -> str | None:
    """The tier a process with this argv belongs to, if any: tmux, the real `claude`, our CLI (or fork server),
    a worker interpreter, a benchmark script."""
    program = os.path.basename(argv[0]) if argv else ""
    if program in ("tmux", "claude"):
        return "interop" if program == "claude" else "tmux"
    if program in ("agentteams", "redis-server"):
        return "proc"
    if program.startswith("python"):
        rest = argv[1:]
        module = rest[rest.index("-m") + 1] if "-m" in rest[:-1] else ""
        if module.split(".")[0] == "agentteams" or module == "tests.support.workers":
            return "proc"
        script = next((a for a in rest if not a.startswith("-")), "")
        if not module and "-c" not in rest and Path(script).name.startswith("bench_"):
            return "proc"
    return None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "subprocess.Popen" or _tiers_now is None:
        return
    argv = [os.fsdecode(a) for a in ([args[1]] if isinstance(args[1], (str, bytes)) else args[1])]
    tier = _needs_tier(argv)
    if tier is not None and tier not in _tiers_now:
        raise RuntimeError(
            f"a test without the `{tier}` marker started {argv[:3]}: reach it through a fixture of that tier "
            f"({', '.join(f for f, t in TIER_OF_FIXTURE.items() if t == tier)}; tests/conftest.py)"
        )


sys.addaudithook(_audit)


@pytest.fixture
def servers() -> Iterator[list[MockServer]]:
    """Scripted servers a test starts and appends here: each is stopped at the end."""
    started: list[MockServer] = []
    yield started
    for server in started:
        server.stop()


# -- the interactive lead in a pane (tests/support/lead_pane.py): the REPL's tests and those of hooks, steering
# and TodoWrite in it


@pytest.fixture
def start_lead(
    tmux: Tmux, cli: Cli, tmp_path: Path, config_root: Path
) -> Iterator[Callable[..., tuple[LeadPane, MockServer, Path]]]:
    """Start the interactive lead (once per test) in `tmux` against a scripted server on `script`."""
    servers: list[MockServer] = []

    def start(script: dict[str, Any], *args: str) -> tuple[LeadPane, MockServer, Path]:
        assert not servers, "one interactive lead per test"
        server = MockServer(script).start()
        servers.append(server)
        work = tmp_path / "work"
        work.mkdir(exist_ok=True)
        env = child_env(config_root)
        env.pop("CLAUDE_CODE_TEAMMATE_COMMAND", None)
        env.update({"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": API_KEY, "LANG": "C.UTF-8",
                    "TERM": "xterm-256color"})  # fmt: skip
        return LeadPane(tmux, cli, env, work, list(args)), server, work

    yield start
    tmux.stop()
    for server in servers:
        server.stop()


@pytest.fixture
def start_repl(tmux: Tmux, cli: Cli, work: Path, config_root: Path) -> Iterator[Start]:
    """Start the interactive lead in `work` (once per test) against a scripted server."""
    servers: list[MockServer] = []

    def start(script: dict[str, Any], *args: str) -> tuple[LeadPane, MockServer]:
        assert not servers, "one interactive lead per test"
        server = MockServer(script).start()
        servers.append(server)
        env = child_env(config_root)
        env.pop("CLAUDE_CODE_TEAMMATE_COMMAND", None)
        env.update({"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": API_KEY, "LANG": "C.UTF-8",
                    "TERM": "xterm-256color"})  # fmt: skip
        return LeadPane(tmux, cli, env, work, list(args)), server

    yield start
    tmux.stop()
    for server in servers:
        server.stop()
