"""`agentteams demo` end to end: a new tmux session (private server), the scripted scenario run to the end,
Ctrl-D in the lead pane, and nothing left behind; unwatched, it ends on its own (issue 15, item 6)."""

from __future__ import annotations

import re
import subprocess
import threading
import time
from pathlib import Path

import pytest

from agentteams.cli.commands.demo import SESSION
from agentteams.errors import AgentTeamsError
from agentteams.run.demo.reaper import LINGER_ENV, linger_seconds
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.presence import Presence, read_presence
from tests.support.cli import Cli
from tests.support.procs import children, cmdline, pid_alive, processes_with_env
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until


def test_demo_runs_to_completion_and_cleans_up(cli: Cli, tmux: Tmux, config_root: Path) -> None:
    env = cli.env()
    env["AGENTTEAMS_TMUX_SOCKET"] = str(tmux.sock)
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        env.pop(key, None)  # the demo needs neither a key nor a network
    proc = cli("demo", "--speed", "0", env=env, timeout=30)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    found = re.search(r"scratch project: (\S+)\)", out)
    assert found, out
    scratch = Path(found.group(1))
    assert "tmux attach -t agentteams-demo" in out
    lead = "agentteams-demo:lead"
    wait_until(lambda: "DEMO COMPLETE" in tmux.capture(lead), 120, "the demo scenario to finish")
    assert "def multiply" in (scratch / "calc.py").read_text()
    assert "test_divide_by_zero" in (scratch / "test_calc.py").read_text()
    assert list((config_root / "teams").iterdir()) == [], "the demo team was not deleted"
    tmux.send(lead, "C-d")
    wait_until(lambda: tmux.run("list-sessions", check=False) == "", 30, "the demo session to close")
    assert not scratch.exists(), "the scratch project is left behind"
    # the session's processes get SIGHUP when it closes: give them a moment to go
    wait_until(lambda: processes_with_env("CLAUDE_CONFIG_DIR", str(config_root)) == [], 10, "no demo process left")


def start_demo(cli: Cli, tmux: Tmux, *, linger: str) -> Path:
    """`agentteams demo --speed 0` on the test's private tmux server, unwatched demos ending `linger` s after."""
    env = cli.env()
    env.update(AGENTTEAMS_TMUX_SOCKET=str(tmux.sock), AGENTTEAMS_DEMO_LINGER=linger)
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        env.pop(key, None)
    proc = cli("demo", "--speed", "0", env=env, timeout=30)
    assert proc.returncode == 0, proc.stderr
    found = re.search(r"scratch project: (\S+)\)", proc.stdout)
    assert found, proc.stdout
    return Path(found.group(1))


def lead_and_fork_server(layout: Layout) -> tuple[int, int]:
    """The demo lead's pid (from its presence record) and its fork server's."""

    def lead() -> Presence | None:
        teams = list(layout.teams_dir.glob("demo-*")) if layout.teams_dir.is_dir() else []
        return read_presence(layout, teams[0].name, LEAD_NAME) if teams else None

    wait_until(lambda: lead() is not None, 60, "the demo lead to write its presence record")
    record = lead()
    assert record is not None
    forks = [c for c in children(record.pid) if "agentteams.procs.fork.server" in cmdline(c)]
    assert len(forks) == 1, [cmdline(c) for c in children(record.pid)]
    return record.pid, forks[0]


def test_an_unwatched_demo_ends_on_its_own(cli: Cli, tmux: Tmux, config_root: Path, layout: Layout) -> None:
    scratch = start_demo(cli, tmux, linger="1")
    lead, fork_server = lead_and_fork_server(layout)
    wait_until(lambda: "DEMO COMPLETE" in tmux.capture(f"{SESSION}:lead"), 120, "the demo scenario to finish")
    done = time.monotonic()
    wait_until(lambda: tmux.run("list-sessions", check=False) == "", 30, "the unwatched demo to close its session")
    ended = time.monotonic() - done
    wait_until(lambda: not pid_alive(lead) and not pid_alive(fork_server), 10, "the lead and its fork server to go")
    assert not scratch.exists(), "the scratch project is left behind"
    wait_until(lambda: processes_with_env("CLAUDE_CONFIG_DIR", str(config_root)) == [], 10, "no demo process left")
    assert ended < 15, f"an unwatched demo ended {ended:.1f} s after its scenario (linger 1 s)"
    print(f"unwatched demo closed {ended:.2f} s after DEMO COMPLETE showed (linger 1 s)")


def test_a_watched_demo_stays_until_its_client_leaves(cli: Cli, tmux: Tmux, config_root: Path) -> None:
    start_demo(cli, tmux, linger="1")
    client = subprocess.Popen(  # a control-mode client counts as attached, as a terminal's would
        ["tmux", "-S", str(tmux.sock), "-C", "attach-session", "-t", f"={SESSION}"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_until(lambda: tmux.run("list-clients", check=False) != "", 10, "the control client to attach")
        wait_until(lambda: "DEMO COMPLETE" in tmux.capture(f"{SESSION}:lead"), 120, "the demo scenario to finish")
        stay_until = time.monotonic() + 4  # four times the linger: an unwatched demo would be gone by then
        while time.monotonic() < stay_until:
            assert SESSION in tmux.run("list-sessions", "-F", "#{session_name}", check=False).split(), "it closed"
            time.sleep(0.2)  # a thing that must NOT happen: watched for its whole window
    finally:
        assert client.stdin is not None
        client.stdin.close()  # the client leaves: nobody watches any more
        client.wait(10)
    wait_until(lambda: tmux.run("list-sessions", check=False) == "", 30, "the demo to end once unwatched")
    wait_until(lambda: processes_with_env("CLAUDE_CONFIG_DIR", str(config_root)) == [], 10, "no demo process left")


@pytest.mark.parametrize(("raw", "seconds"), [(None, 60.0), ("", 60.0), ("0", 0.0), ("2.5", 2.5), (" 90 ", 90.0)])
def test_the_linger_comes_from_the_environment(raw: str | None, seconds: float) -> None:
    assert linger_seconds({} if raw is None else {LINGER_ENV: raw}) == seconds


@pytest.mark.parametrize("raw", ["soon", "-1", "nan", "inf", "1e999"])
def test_a_bad_linger_is_one_clear_line(raw: str) -> None:
    with pytest.raises(AgentTeamsError, match=LINGER_ENV) as refused:
        linger_seconds({LINGER_ENV: raw})
    assert len(str(refused.value).splitlines()) == 1


def test_a_bad_linger_starts_nothing(cli: Cli, tmux: Tmux) -> None:
    env = {**cli.env(), "AGENTTEAMS_TMUX_SOCKET": str(tmux.sock), LINGER_ENV: "soon"}
    proc = cli("demo", "--speed", "0", env=env, timeout=30)
    assert proc.returncode != 0 and LINGER_ENV in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert tmux.run("list-sessions", check=False) == "", "no demo session may start"


def test_a_reaper_that_never_saw_the_team_ends_the_demo_on_the_leads_last_words(
    tmux: Tmux, layout: Layout, tmp_path: Path
) -> None:
    """A reaper started late on a loaded machine (the team made and deleted before its first look) still knows the
    scenario is over: the lead's pane shows its last words. Before they show, it waits."""
    from agentteams.backends.tmux import TmuxBackend
    from agentteams.run.demo.reaper import Reaper
    from agentteams.run.demo.script import DONE_MARK
    from agentteams.store.file.teams import TeamStore

    tmux.start(None, tmp_path, "cat", session=SESSION)
    tmux.run("rename-window", "-t", f"={SESSION}:", "lead")
    reaper = Reaper(TmuxBackend(str(tmux.sock)), TeamStore(layout), SESSION, "demo-x", linger=0.2, poll=0.05,
                    done_mark=DONE_MARK)  # fmt: skip
    assert not reaper.shows_done()
    waited: list[bool] = []
    watcher = threading.Thread(target=lambda: waited.append(reaper.wait_unwatched()), daemon=True)
    watcher.start()
    watcher.join(1.0)
    assert watcher.is_alive(), "no team seen and no last words: the scenario may not have begun"
    tmux.send(f"={SESSION}:lead", f"Done. {DONE_MARK}. Press Ctrl-D to leave.", "Enter", literal=False)
    watcher.join(10.0)
    assert waited == [True]
