"""Background shells: Bash run_in_background keeps running across turns, BashOutput returns only new output (and
its filter drops the rest), KillShell ends the whole group, output stays bounded, and nothing outlives the agent
(a clean exit, SIGTERM, or SIGKILL of the agent process: the guard)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentteams.agent.prompts import Identity
from agentteams.agent.session import Session, SessionOptions
from agentteams.mockapi import MockServer
from agentteams.store.file.store import FileStore
from agentteams.store.paths import Layout
from agentteams.tools.base import ToolContext, ToolInputError, ToolResult
from agentteams.tools.shell import background
from agentteams.tools.shell.background_tools import BashOutputTool, KillShellTool
from agentteams.tools.shell.bash import BashTool
from tests.support.cli import Cli
from tests.support.fake_model import FakeModel, text, tool
from tests.support.pgroups import find_process, live_members, wait_group_gone
from tests.support.wait import wait_until

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process checks read /proc")


@pytest.fixture
def ctx(tmp_path: Path, layout: Layout) -> Iterator[ToolContext]:
    work = tmp_path / "work"
    work.mkdir()
    context = ToolContext(cwd=work, store=FileStore(layout), session_id="test-session")
    yield context
    context.shells.close()


def start(ctx: ToolContext, command: str, **extra: object) -> str:
    result = BashTool().run({"command": command, "run_in_background": True, **extra}, ctx)
    assert not result.is_error, result.content
    assert result.content.startswith("Command running in background with ID: b")
    assert result.data is not None
    shell_id = result.data["background_id"]
    assert isinstance(shell_id, str)
    return shell_id


def output(ctx: ToolContext, shell_id: str, **extra: object) -> ToolResult:
    return BashOutputTool().run({"bash_id": shell_id, **extra}, ctx)


def body(result: ToolResult) -> str:
    """The text between <output> and </output>."""
    return result.content.split("<output>", 1)[1].rsplit("</output>", 1)[0].strip("\n")


def collect_until(ctx: ToolContext, shell_id: str, needle: str, **extra: object) -> list[str]:
    """Read again and again until `needle` has come; every read's new output, in order."""
    reads: list[str] = []

    def seen() -> bool:
        reads.append(body(output(ctx, shell_id, **extra)))
        return needle in "".join(reads)

    wait_until(seen, 10, f"{needle!r} in the background output", explain=lambda: repr(reads[-3:]))
    return [r for r in reads if r]


def test_schemas_are_claude_codes() -> None:
    assert BashOutputTool.input_schema["required"] == ["bash_id"]
    assert set(BashOutputTool.input_schema["properties"]) == {"bash_id", "filter"}
    assert KillShellTool.input_schema["required"] == ["shell_id"]
    assert BashOutputTool().read_only and KillShellTool().read_only  # they touch only this agent's own shells


def test_bash_output_returns_only_what_is_new(ctx: ToolContext) -> None:
    shell_id = start(ctx, "echo one; while [ ! -f go ]; do sleep 0.02; done; echo two; sleep 60")
    first = collect_until(ctx, shell_id, "one")
    assert first == ["one"]
    running = output(ctx, shell_id)
    assert "<status>running</status>" in running.content and "<retrieval_status>not_ready" in running.content
    assert body(running) == ""  # nothing new since
    (ctx.cwd / "go").touch()
    assert collect_until(ctx, shell_id, "two") == ["two"]  # not "one" again


def test_a_filter_keeps_matching_lines_and_drops_the_rest(ctx: ToolContext) -> None:
    shell_id = start(ctx, "printf 'keep 1\\nskip 2\\nkeep 3\\n'; touch done; sleep 60")
    wait_until((ctx.cwd / "done").exists, 10, "the command to print")
    result = output(ctx, shell_id, filter="^keep")
    assert body(result) == "keep 1\nkeep 3"
    assert "not shown" in result.content
    assert body(output(ctx, shell_id)) == ""  # the filtered-out line is gone, as in Claude Code
    with pytest.raises(ToolInputError):
        output(ctx, shell_id, filter="(")


def test_a_finished_command_reports_its_exit_code(ctx: ToolContext) -> None:
    shell_id = start(ctx, "echo bye; exit 4")
    shell = ctx.shells.get(shell_id)
    assert shell is not None
    wait_until(lambda: shell.status != "running", 10, "the command to end")
    result = output(ctx, shell_id)
    assert "<status>failed</status>" in result.content and "<exit_code>4</exit_code>" in result.content
    assert body(result) == "bye"
    assert KillShellTool().run({"shell_id": shell_id}, ctx).is_error  # not running any more


def test_kill_shell_ends_the_whole_group(ctx: ToolContext) -> None:
    marker = f"bgkill-{uuid.uuid4().hex[:8]}"
    shell_id = start(ctx, f"sleep 300 & bash -c 'exec -a {marker} sleep 300' & wait")
    shell = ctx.shells.get(shell_id)
    assert shell is not None
    wait_until(lambda: find_process(marker) is not None, 10, "the grandchild to start")
    result = KillShellTool().run({"shell_id": shell_id}, ctx)
    answer = json.loads(result.content)
    assert not result.is_error and answer["task_id"] == shell_id and answer["task_type"] == "local_bash"
    assert answer["message"].startswith(f"Successfully stopped task: {shell_id} (")
    wait_group_gone(shell.proc.pid)
    assert find_process(marker) is None
    assert "<status>killed</status>" in output(ctx, shell_id).content
    with pytest.raises(ToolInputError, match="No background shell"):
        KillShellTool().run({"shell_id": "bnope"}, ctx)


def test_output_is_bounded(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(background, "MAX_KEPT_CHARS", 100_000)
    shell_id = start(ctx, "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo END")
    shell = ctx.shells.get(shell_id)
    assert shell is not None
    wait_until(lambda: shell.status != "running", 20, "the command to end")
    result = output(ctx, shell_id)
    assert len(body(result)) <= background.MAX_READ_CHARS
    assert body(result).endswith("END")  # the newest output is what is kept
    assert result.data is not None and result.data["dropped"] >= 3_000_000 - background.MAX_READ_CHARS


def test_a_background_timeout_stops_the_command(ctx: ToolContext) -> None:
    shell_id = start(ctx, "sleep 60", timeout=300)
    shell = ctx.shells.get(shell_id)
    assert shell is not None
    wait_until(lambda: shell.status == "killed", 10, "the time limit to stop it")
    assert "past its time limit" in output(ctx, shell_id).content


def test_it_keeps_running_across_turns_and_the_session_end_stops_it(tmp_path: Path, layout: Layout) -> None:
    work = tmp_path / "w"
    work.mkdir()
    marker = f"bgturns-{uuid.uuid4().hex[:8]}"
    command = f"echo started; bash -c 'exec -a {marker} sleep 300'"
    model = FakeModel([
        [tool("Bash", command=command, run_in_background=True)], [text("started it")],
        [tool("BashOutput", bash_id="{id}")], [text("read it")],
    ])  # fmt: skip
    session = Session(SessionOptions(cwd=work, permission_mode="bypassPermissions"), model, layout=layout)
    session.run("start it")
    shell_id = next(iter(session.ctx.shells._shells))
    model.turns[2] = [tool("BashOutput", bash_id=shell_id)]
    wait_until(lambda: find_process(marker) is not None, 10, "the command to run")
    session.run("read it")  # a second user turn: the command still runs and its output is there
    assert "started" in model.user_text(3) and "<status>running</status>" in model.user_text(3)
    session.end()
    wait_until(lambda: find_process(marker) is None, 10, "the session end to stop the command")


def test_the_tools_are_offered_to_a_teammate_too(tmp_path: Path, layout: Layout) -> None:
    model = FakeModel([[text("ok")]])
    options = SessionOptions(cwd=tmp_path, team_role="teammate", identity=Identity("eve", "team"))
    Session(options, model, layout=layout).run("hi")
    names = [t.name for t in model.requests[0].tools]
    assert names[:8] == ["Bash", "Read", "Write", "Edit", "Glob", "Grep", "BashOutput", "KillShell"]


GUARDED = """
import os, sys, time
from pathlib import Path
from agentteams.tools.shell.background import ShellRegistry
shells = ShellRegistry()
shells.start("bash -c 'exec -a " + os.environ["BG_MARK"] + " sleep 300'", Path.cwd(), 600000)
print("started", flush=True)
time.sleep(300)
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_the_guard_stops_background_groups_when_the_agent_is_killed(tmp_path: Path, sig: signal.Signals) -> None:
    marker = f"bgguard-{uuid.uuid4().hex[:8]}"
    proc = subprocess.Popen([sys.executable, "-c", GUARDED], cwd=tmp_path, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "BG_MARK": marker})  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "started\n"
        wait_until(lambda: find_process(marker) is not None, 10, "the background command to run")
        pid, pgid = find_process(marker) or (0, 0)
        os.kill(proc.pid, sig)
        proc.wait(10)
        wait_until(lambda: not live_members(pgid), 10, "the guard to stop the group", explain=lambda: str(pid))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_nothing_is_left_after_the_cli_exits(cli: Cli, tmp_path: Path, servers: list[MockServer]) -> None:
    """The real `agentteams -p` starts a background command and ends its turn; once it exits, the command's group
    is gone."""
    work = tmp_path / "w"
    work.mkdir()
    marker = f"bgcli-{uuid.uuid4().hex[:8]}"
    turns = [
        {"content": [{"type": "tool_use", "name": "Bash",
                      "input": {"command": f"bash -c 'exec -a {marker} sleep 300'", "run_in_background": True}}]},
        {"content": [{"type": "tool_use", "name": "BashOutput", "input": {"bash_id": "{{re:ID: (\\w+)}}"}}]},
        "done",
    ]  # fmt: skip
    server = MockServer({"routes": [{"name": "main", "match": {"any": "BGMARK"}, "turns": turns}]}).start()
    servers.append(server)
    env = {**cli.env(), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-test-bg"}
    proc = cli("-p", "BGMARK go", "--dangerously-skip-permissions", env=env, cwd=work, timeout=60)
    assert proc.returncode == 0, proc.stderr
    results = [b for r in server.requests if isinstance(r.get("body"), dict)
               for m in r["body"]["messages"] if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]  # fmt: skip
    assert any("<status>running</status>" in json.dumps(b) for b in results), results
    wait_until(lambda: find_process(marker) is None, 10, "the background command to be stopped at exit")


def test_a_command_that_ends_is_noticed_at_the_next_tool_result(tmp_path: Path, layout: Layout) -> None:
    """As Claude Code's task notification: the model hears once that a background command ended (not of one it
    stopped itself with KillShell)."""
    work = tmp_path / "w"
    work.mkdir()
    model = FakeModel([
        [tool("Bash", command="while [ ! -f go ]; do sleep 0.02; done; touch ended; exit 3", run_in_background=True),
         tool("Bash", command="sleep 60", run_in_background=True)],
        [tool("Bash", command="touch go; while [ ! -f ended ]; do sleep 0.02; done; sleep 1")],
        [tool("Bash", command="true")],
        [text("done")],
    ])  # fmt: skip
    session = Session(SessionOptions(cwd=work, permission_mode="bypassPermissions"), model, layout=layout)
    session.run("go")
    said = [json.dumps(model.requests[n].messages[-1]) for n in (1, 2, 3)]
    assert "task-notification" not in said[0]
    assert "<status>failed</status>" in said[1] and "failed with exit code 3" in said[1], said[1]
    assert "task-notification" not in said[2]  # told once
    session.end()
