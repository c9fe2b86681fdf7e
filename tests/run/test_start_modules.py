"""What a cold start loads before its first request (issue 30, fast from cold): a `-p` run and an SDK stream-json
session send it without the modules only some sessions use (messages between sessions, @-mentions, subagents, output
styles, the MCP scopes, diffs), each loaded once used: a session that lists its peers still reaches them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.headless import KEY, script, tool
from tests.support.stream_json import STREAM_ARGS, sdk_user_line

# loaded by a session that uses them, never on the way to its first request
OFF_THE_START_PATH = (
    "agentteams.agent.peers",
    "agentteams.agent.peer_texts",
    "agentteams.store.peer_wire",
    "agentteams.store.peer_records",
    "agentteams.procs.peer_socket",  # messages between sessions: after the request
    "agentteams.agent.typed_input",  # only for a prompt with an @
    "agentteams.agent.subagents",  # at the first Task call
    "agentteams.settings.output_styles",  # only when outputStyle is set
    "agentteams.settings.mcp_scopes",  # only when a project in the state file has MCP servers or approvals
    "difflib",  # a rewind's line counts
    "agentteams.agent.permissions.bash_judge",  # the shell's judges: at the first command or path judged
    "agentteams.agent.permissions.path_commands",
    "subprocess",  # a command's run (Bash, Grep with rg, an apiKeyHelper), not a tool's offer
    "agentteams.tools.team.worktree_git",  # git's, at a TeamMerge
    "agentteams.backends.git",
    "shutil",  # with bz2 and lzma: a team's removal, a task's output file (tempfile), rg's lookup
    "tempfile",
    "anthropic",
    "httpx",  # Anthropic's API is reached without the SDK and its HTTP library
)

# and by a -p run with no --plugin-dir, /command nor file with front matter (an SDK session's init line lists commands)
P_ALSO = ("agentteams.settings.plugins", "agentteams.settings.commands", "agentteams.settings.frontmatter")

# the CLI as its console script runs it, the modules loaded when the session's first model call starts written out
_PROBE = """
import json, os, sys
from agentteams.agent import loop
call = loop.Agent._call_model
def first(self, *args, **kwargs):
    out = os.environ.pop("START_MODULES_OUT", None)
    if out:
        with open(out, "w") as f:
            json.dump(sorted(sys.modules), f)
    return call(self, *args, **kwargs)
loop.Agent._call_model = first
sys.argv = ["agentteams", *sys.argv[1:]]
from agentteams.cli import main
main()
"""


def _loaded(cli: Cli, work: Path, url: str, out: Path, *args: str, stdin: str = "") -> set[str]:
    env = {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": url, "AGENTTEAMS_NO_WARM": "1",
           "START_MODULES_OUT": str(out)}  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], env=env, cwd=work, input=stdin, capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(out.read_text()))


@pytest.mark.proc
def test_a_p_run_sends_its_first_request_without_them(cli: Cli, work: Path, tmp_path: Path, config_root: Path) -> None:
    # a state file as an interactive claude leaves it: the project's MCP keys there, empty
    project = {"hasTrustDialogAccepted": True, "mcpServers": {}, "enabledMcpjsonServers": [],
               "disabledMcpjsonServers": []}  # fmt: skip
    (config_root / ".claude.json").write_text(json.dumps({"projects": {str(work): project}}))
    with MockServer(script("hello")) as server:
        loaded = _loaded(cli, work, server.base_url, tmp_path / "p.json", "-p", "hi")
    assert "agentteams.agent.session" in loaded  # the probe saw the session's first call
    assert sorted(set(OFF_THE_START_PATH + P_ALSO) & loaded) == []


@pytest.mark.proc
def test_an_sdk_session_sends_its_first_request_without_them(cli: Cli, work: Path, tmp_path: Path) -> None:
    with MockServer(script("hello")) as server:
        loaded = _loaded(cli, work, server.base_url, tmp_path / "sdk.json", *STREAM_ARGS, stdin=sdk_user_line("hi"))
    assert "agentteams.run.sdk.session" in loaded
    assert sorted(set(OFF_THE_START_PATH) & loaded) == []


@pytest.mark.proc
def test_a_p_run_that_lists_its_peers_has_its_place_among_them(cli: Cli, work: Path) -> None:
    """The session's endpoint is published after its first request: a ListAgents call in that request's answer waits
    for it, and is answered as a published session's."""
    env = {**cli.env(), "ANTHROPIC_API_KEY": KEY, "AGENTTEAMS_NO_WARM": "1"}
    with MockServer(script(tool("ListAgents"), "listed")) as server:
        proc = cli("-p", "hi", "-n", "lister", "--dangerously-skip-permissions", cwd=work,
                   env={**env, "ANTHROPIC_BASE_URL": server.base_url})  # fmt: skip
        results = [b for r in server.requests for m in r["body"]["messages"][-1:] if isinstance(m["content"], list)
                   for b in m["content"] if b.get("type") == "tool_result"]  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "listed"
    assert len(results) == 1 and "This session is lister [" in json.dumps(results[0]), results


def test_the_repl_draws_its_prompt_before_the_session_s_modules(tmp_path: Path) -> None:
    """What the interactive start imports before its prompt is drawn (the lead is composed after, while the person
    types): the command line's reading, the options, the REPL; not the MCP start-up nor a -p run's output lines."""
    code = ("import json, sys\nimport agentteams.run.agent, agentteams.run.interactive, agentteams.run.headless, "
            "agentteams.agent.session_options, agentteams.ui.repl\nprint(json.dumps(sorted(sys.modules)))")  # fmt: skip
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                                           text=True, check=True).stdout))  # fmt: skip
    assert "agentteams.ui.repl" in loaded
    before_prompt = ("agentteams.agent.mcp_servers", "agentteams.agent.mcp_wait", "agentteams.run.stream_lines",
                     "agentteams.model.types",
                     "agentteams.run.hook_lines", "agentteams.agent.session", *OFF_THE_START_PATH)  # fmt: skip
    assert sorted(set(before_prompt) & loaded) == ["subprocess"]  # asyncio's, for the prompt's event loop
