"""Bash: working directory, exit codes, output cap, empty stdin, no secrets, and no process left behind."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest

from agentteams.store.file.store import FileStore
from agentteams.store.paths import Layout
from agentteams.tools.base import ToolContext, ToolInputError, ToolResult
from agentteams.tools.shell.bash import BashTool
from agentteams.tools.shell.process import DEFAULT_TIMEOUT_MS, MAX_OUTPUT_CHARS, MAX_TIMEOUT_MS, parse_timeout
from tests.support.pgroups import find_process, wait_group_gone
from tests.support.wait import wait_until

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process checks read /proc")


@pytest.fixture
def ctx(tmp_path: Path, layout: Layout) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(cwd=work, store=FileStore(layout), session_id="test-session")


def bash(ctx: ToolContext, command: str, **extra: object) -> ToolResult:
    return BashTool().run({"command": command, **extra}, ctx)


def test_schema_uses_claude_code_field_names() -> None:
    tool = BashTool()
    assert tool.name == "Bash"
    assert tool.kind == "execute"
    assert set(tool.input_schema["properties"]) == {"command", "timeout", "description", "run_in_background"}
    assert tool.input_schema["required"] == ["command"]
    assert tool.permission_target({"command": "git status"}) == "git status"


def test_runs_in_the_working_directory_with_stderr_interleaved(ctx: ToolContext) -> None:
    result = bash(ctx, "pwd; echo out; echo err >&2; echo out2")
    assert not result.is_error
    assert result.content.splitlines() == [str(ctx.cwd), "out", "err", "out2"]
    assert result.data is not None and result.data["exit_code"] == 0


def test_a_failing_command_reports_its_exit_code(ctx: ToolContext) -> None:
    result = bash(ctx, "echo partial; exit 3")
    assert result.is_error
    assert result.content == "partial\nExit code: 3"
    assert bash(ctx, "true").content == "(no output)"


def test_a_command_killed_by_a_signal_says_so(ctx: ToolContext) -> None:
    result = bash(ctx, "kill -9 $$")
    assert result.is_error
    assert "Exit code: -9" in result.content and "SIGKILL" in result.content


def test_stdin_is_empty_so_cat_returns_at_once(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = bash(ctx, "cat; read line || echo eof", timeout=10_000)
    assert time.monotonic() - started < 5
    assert not result.is_error
    assert result.content == "eof"


def test_long_output_is_cut_in_the_middle_with_a_note(ctx: ToolContext) -> None:
    n = 50_000
    total = sum(len(str(i)) + 1 for i in range(1, n + 1))
    result = bash(ctx, f"seq 1 {n}")
    assert not result.is_error
    cut = total - MAX_OUTPUT_CHARS
    assert f"[... {cut} characters of output cut ...]" in result.content
    assert result.content.startswith("1\n2\n3\n")
    assert result.content.endswith(f"\n{n - 1}\n{n}")
    assert len(result.content) < MAX_OUTPUT_CHARS + 100
    assert result.data is not None and result.data["chars_cut"] == cut


def test_a_timed_out_command_leaves_no_process_behind(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = bash(ctx, "echo $$; sleep 30 & sleep 30; wait", timeout=500)
    assert time.monotonic() - started < 5
    assert result.is_error
    assert "timed out after 0.5 s" in result.content
    assert result.data is not None and result.data["timed_out"]
    pgid = int(result.content.splitlines()[0])
    wait_group_gone(pgid)


def test_processes_that_ignore_sigterm_are_killed(ctx: ToolContext) -> None:
    result = bash(ctx, "echo $$; trap '' TERM; sleep 30 & sleep 30; wait", timeout=300)
    assert result.is_error and "timed out after 0.3 s" in result.content
    pgid = int(result.content.splitlines()[0])
    wait_group_gone(pgid)


def test_an_interrupt_kills_the_whole_group(ctx: ToolContext) -> None:
    marker = f"31.{os.getpid()}"
    results: list[ToolResult] = []
    worker = threading.Thread(target=lambda: results.append(bash(ctx, f"sleep {marker} & sleep {marker}; wait")))
    worker.start()
    try:
        pgid: int | None = None

        def found() -> bool:
            nonlocal pgid
            found = find_process(f"sleep\0{marker}")
            pgid = found[1] if found else None
            return pgid is not None

        wait_until(found, 10, "the command to start")
        ctx.interrupt.set()
        worker.join(10)
        assert not worker.is_alive()
    finally:
        ctx.interrupt.set()
        worker.join(10)
    assert results[0].is_error and "interrupted" in results[0].content
    assert pgid is not None
    wait_group_gone(pgid)


def test_background_processes_holding_the_output_are_stopped(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = bash(ctx, "echo $$; sleep 30 &")
    assert time.monotonic() - started < 5
    assert not result.is_error
    assert "Background processes that kept the output open were stopped" in result.content
    pgid = int(result.content.splitlines()[0])
    wait_group_gone(pgid)


@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs the setsid command")
def test_a_process_that_leaves_the_group_cannot_hang_the_tool(ctx: ToolContext) -> None:
    marker = f"32.{os.getpid()}"
    started = time.monotonic()
    try:
        result = bash(ctx, f"setsid sleep {marker} & echo started")
        assert time.monotonic() - started < 5
        assert result.content.startswith("started\n")
        assert "left the command's process group" in result.content
    finally:
        escaped: list[tuple[int, int]] = []

        def located() -> bool:
            hit = find_process(f"sleep\0{marker}")
            escaped.extend([hit] if hit else [])
            return hit is not None

        with contextlib.suppress(AssertionError):  # best effort: it may never have started
            wait_until(located, 3, "the escaped process")
        for pid, _ in escaped:
            os.kill(pid, signal.SIGKILL)  # the one process this test started beyond the tool's reach


def test_credentials_are_not_passed_to_the_command(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {"ANTHROPIC_API_KEY": "sk-ant-secret-key", "ANTHROPIC_AUTH_TOKEN": "secret-auth-token",
               "AWS_BEARER_TOKEN_BEDROCK": "bedrock-api-key-secret", "ANTHROPIC_FOUNDRY_API_KEY": "foundry-secret",
               "CLAUDE_CODE_OAUTH_TOKEN": "oauth-secret"}  # fmt: skip
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AGENTTEAMS_PROBE", "visible")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIA-users-own-tools")  # the aws CLI in a command may need it
    result = bash(ctx, "env")
    assert "AGENTTEAMS_PROBE=visible" in result.content and "AKIA-users-own-tools" in result.content
    for name, value in secrets.items():
        assert value not in result.content, f"{name} reached the command"


def test_timeout_defaults_and_limits() -> None:
    assert parse_timeout({}) == DEFAULT_TIMEOUT_MS == 120_000
    assert parse_timeout({"timeout": 1500}) == 1500
    assert parse_timeout({"timeout": 10**9}) == MAX_TIMEOUT_MS == 600_000
    for bad in (0, -5, "10", True):
        with pytest.raises(ToolInputError):
            parse_timeout({"timeout": bad})


def test_bad_arguments_are_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolInputError):
        BashTool().run({}, ctx)
    ctx.cwd = ctx.cwd / "missing"
    assert bash(ctx, "true").is_error


def test_ctrl_c_in_the_agent_process_kills_the_running_command(tmp_path: Path) -> None:
    import subprocess
    import sys

    marker = f"32.{os.getpid()}"
    code = (
        "import pathlib; from agentteams.store.file.store import FileStore; from agentteams.store.paths import Layout; "
        "from agentteams.tools.base import ToolContext; from agentteams.tools.shell.bash import BashTool; "
        f"root = pathlib.Path({str(tmp_path)!r}); "
        "ctx = ToolContext(cwd=root, store=FileStore(Layout(root)), session_id='s'); "
        f"BashTool().run({{'command': 'sleep {marker} & sleep {marker}; wait'}}, ctx)"
    )
    agent = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.DEVNULL)
    try:
        found: tuple[int, int] | None = None

        def started() -> bool:
            nonlocal found
            found = find_process(f"sleep\0{marker}")
            return found is not None

        wait_until(started, 15, "the command to start")
        agent.send_signal(signal.SIGINT)  # what Ctrl-C does to the agent's process
        agent.wait(10)
        assert found is not None
        pgid = found[1]
        wait_group_gone(pgid)
    finally:
        agent.kill()
        agent.wait()


def test_a_ctrl_c_while_the_shell_starts_is_held_until_its_pid_is_known() -> None:
    """A SIGINT that lands inside Popen (after the fork, before the pid is stored) would leave the command's group
    running with nobody to kill it: it is raised once the block that starts the shell is over."""
    from agentteams.tools.shell.process import sigint_deferred

    reached_end_of_block = False
    with pytest.raises(KeyboardInterrupt), sigint_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the handler runs here: it must only record the signal
        reached_end_of_block = True
    assert reached_end_of_block
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
