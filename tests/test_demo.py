"""`agentteams demo` end to end: a new tmux session (private server), the scripted scenario run to the end,
Ctrl-D in the lead pane, and nothing left behind."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.cli import Cli
from tests.support.procs import processes_with_env
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
