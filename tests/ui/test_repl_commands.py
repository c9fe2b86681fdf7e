"""The REPL's slash commands, typed into `agentteams` running in a pane of a private tmux server against the
scripted Messages API: what the pane shows, and what requests the server saw (and did not see).

Several commands share one REPL session per test, to keep the tier fast."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest

from agentteams import __version__
from agentteams.mockapi import MockServer
from agentteams.model.pricing import cost_usd
from agentteams.model.types import Usage
from agentteams.store.paths import Layout
from tests.support.cli import Cli
from tests.support.lead_pane import (
    API_KEY,
    QUESTION,
    START,
    STEP,
    Start,
    approve_shutdown,
    lead_route,
    model_calls,
    run,
    tool_turn,
)
from tests.support.procs import child_env
from tests.support.wait import wait_until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SESSION_ID = re.compile(r"new session ([0-9a-f-]{36})")


def write(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def served(server: MockServer, route: str) -> tuple[int, Usage, float]:
    """Requests answered on `route`, their usage added up, and what they cost at each request's model's price."""
    total, dollars, n = Usage(), 0.0, 0
    for record in server.requests:
        response = record.get("response")
        if record.get("route") != route or not isinstance(response, dict) or "usage" not in response:
            continue
        usage = Usage(**{k: int(v) for k, v in response["usage"].items() if k in Usage().to_json()})
        total.add(usage)
        dollars += cost_usd(record["body"]["model"], usage)
        n += 1
    return n, total, dollars


def cost_row(screen: str, agent: str) -> list[str]:
    """The last /cost row for `agent`: requests, input, output, cache write, cache read, cost."""
    rows = [ln.split() for ln in screen.splitlines() if ln.split()[:1] == [agent]]
    assert rows, f"no /cost row for {agent}:\n{screen}"
    return rows[-1][1:]


def expected_row(server: MockServer, route: str) -> list[str]:
    n, u, dollars = served(server, route)
    numbers = (n, u.input_tokens, u.output_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens)
    return [*(f"{x:,}" for x in numbers), f"${dollars:.4f}"]


def usage(n: int) -> dict[str, int]:
    """A turn's usage, distinct per turn so that a sum that misses or repeats one shows."""
    return {"input_tokens": 1000 + n, "output_tokens": 200 + n, "cache_creation_input_tokens": 30 + n,
            "cache_read_input_tokens": 4 + n}  # fmt: skip


def test_model_clear_cost_unknown_and_custom_commands(
    start_repl: Start, work: Path, config_root: Path, layout: Layout
) -> None:
    commands = work / ".claude" / "commands"
    write(commands / "greet.md", "---\ndescription: Greet someone\nargument-hint: <name> [mood]\n---\n"
                                 "GREET-BODY $0 feels $1 (all: $ARGUMENTS)\n")  # fmt: skip
    write(commands / "frontend" / "comp.md", "---\nmodel: haiku\n---\nCOMP-BODY for $ARGUMENTS\n")
    write(config_root / "commands" / "mine.md", "USER-BODY\n")
    write(config_root / "commands" / "help.md", "USER-HELP-BODY\n")  # a built-in's name: the built-in wins
    answers = [{"text": f"ANSWER-{i}", "usage": usage(i)} for i in range(1, 5)]
    pane, server = start_repl({"routes": [lead_route(*answers)]})
    pane.idle(timeout=START)

    shown = run(pane, "/model", "Switch with /model NAME")
    assert "Model: claude-opus-5-5 (opus)" in shown and re.search(r"sonnet +claude-sonnet-5-5", shown), shown
    assert "Set model to gpt-4:" in run(pane, "/model gpt-4", "Set model to gpt-4")  # any name, as 2.1.332
    run(pane, "/model sonnet", "Set model to sonnet (claude-sonnet-5-5)")
    pane.submit("FIRST-QUESTION")
    pane.wait_text("⏺ ANSWER-1")
    pane.idle()
    assert model_calls(server)[-1]["model"] == "claude-sonnet-5-5"

    for line in ("/nosuch", "/nosuch with some arguments", "/frontend:nope x"):
        assert "unknown command" in run(pane, line, f"unknown command {line.split()[0]}")
    assert len(model_calls(server)) == 1, "an unknown command reached the model"

    cleared = run(pane, "/clear", "Conversation cleared")
    new_id = SESSION_ID.search(cleared)
    assert new_id, cleared
    pane.submit("SECOND-QUESTION")
    pane.wait_text("⏺ ANSWER-2")
    pane.idle()
    second = model_calls(server)[-1]
    assert second["model"] == "claude-sonnet-5-5" and len(second["messages"]) == 1
    assert "SECOND-QUESTION" in json.dumps(second) and "FIRST-QUESTION" not in json.dumps(second["messages"])
    transcript = layout.transcript_file(work, new_id.group(1)).read_text(encoding="utf-8")
    assert "SECOND-QUESTION" in transcript and "FIRST-QUESTION" not in transcript

    pane.submit("/greet bob 'very happy'")
    pane.wait_text("⏺ ANSWER-3")
    pane.idle()
    greet = json.dumps(model_calls(server)[-1]["messages"][-1])
    assert "GREET-BODY bob feels very happy (all: bob 'very happy')" in greet, greet
    assert "<command-name>/greet</command-name>" in greet and "$ARGUMENTS" not in greet
    pane.submit("/frontend:comp the header")
    pane.wait_text("⏺ ANSWER-4")
    pane.idle()
    comp = model_calls(server)[-1]
    assert comp["model"] == "claude-haiku-5-5" and "COMP-BODY for the header" in json.dumps(comp["messages"][-1])

    shown = run(pane, "/help", "Ctrl-D leaves")
    for text in ("/model [name]", "/cost", "/status", "/permissions", "/config", "/greet <name> [mood]",
                 "Greet someone (project)", "/frontend:comp", "(project:frontend)", "USER-BODY (user)",
                 "USER-HELP-BODY (user) · shadowed by the built-in"):  # fmt: skip
        assert text in shown, shown
    shown = run(pane, "/cost", "total")
    assert cost_row(shown, "team-lead") == expected_row(server, "lead"), shown
    assert cost_row(shown, "total") == expected_row(server, "lead"), shown
    assert len(model_calls(server)) == 4  # only the four prompts reached the model


def test_status_permissions_config_memory_agents_and_hooks_show_their_sources(
    start_repl: Start, work: Path, config_root: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    user = write(config_root / "settings.json", json.dumps({"permissions": {"allow": ["Read"]}}))
    project = write(work / ".claude" / "settings.json", json.dumps({
        "permissions": {"allow": ["Bash(git status:*)"], "deny": ["Bash(rm:*)"], "ask": ["Bash(curl:*)"],
                        "additionalDirectories": [str(extra)]},
        "env": {"MY_TOKEN": "secret-token-value-123", "PLAIN_VALUE": "shown-plainly"},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true", "timeout": 5}]}]},
    }))  # fmt: skip
    local = write(work / ".claude" / "settings.local.json", json.dumps({"model": "haiku"}))
    memory = write(work / "CLAUDE.md", "Project memory.\n")
    reviewer = write(
        work / ".claude" / "agents" / "reviewer.md",
        "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep\nmodel: opus\n---\nReview.\n",
    )
    write(work / ".claude" / "agents" / "broken.md", "---\nname: broken\n")  # never closed: listed as not loaded
    # touch, not echo: a read-only command runs without asking (as the real CLI runs it)
    script = {"routes": [lead_route(tool_turn("Bash", command="touch made"), "RAN-IT")]}
    pane, _server = start_repl(script, "--allowedTools", "Glob", "run touch")
    pane.wait(lambda s: QUESTION in s, "the permission question", timeout=START)
    # its choices are drawn after the question line: wait for the one taken, not a screen of the moment
    pane.wait_text("don't ask again for Bash(touch made:*) in this session")
    pane.submit("2")  # yes, and don't ask again: a rule for this session
    pane.wait_text("⏺ RAN-IT")
    pane.idle()

    shown = run(pane, "/permissions", "Additional directories")
    for text in (f"Read  user ({user})", f"Bash(git status:*)  project ({project})", "Glob  --allowedTools",
                 "Bash(touch made:*)  allowed for this session", f"Bash(curl:*)  project ({project})",
                 f"Bash(rm:*)  project ({project})", f"{extra}  project ({project})",
                 "Permission mode: default"):  # fmt: skip
        assert re.search(" +".join(map(re.escape, text.split("  "))), shown), (text, shown)  # any alignment

    shown = run(pane, "/status", "Team:")
    for text in (f"agentteams {__version__}", "claude-haiku-5-5", f"Working dir:      {work}",
                 "Permission mode:  default", "API key:          ANTHROPIC_API_KEY from the environment",
                 "API provider:     Anthropic API",
                 f"user: {user}", f"project: {project}", f"local: {local}", str(memory),
                 "Team:             none"):  # fmt: skip
        assert text in shown, (text, shown)
    assert re.search(r"Session id: +[0-9a-f-]{36}", shown), shown

    shown = run(pane, "/config", "PLAIN_VALUE")
    assert re.search(rf'env\.MY_TOKEN +"\*\*\*" +\(project: {re.escape(str(project))}\)', shown), shown
    assert re.search(rf'model +"haiku" +\(local: {re.escape(str(local))}\)', shown), shown
    assert '"shown-plainly"' in shown
    assert str(memory) in run(pane, "/memory", "CLAUDE.md")
    shown = run(pane, "/agents", "not loaded:")
    for text in ("general-purpose · built-in", "Explore · built-in", "Plan · built-in",
                 f"reviewer · project ({reviewer}) · tools: Read, Grep · model: opus", "broken.md"):  # fmt: skip
        assert text in " ".join(shown.split()), (text, shown)  # the pane wraps long lines
    shown = run(pane, "/hooks", "matcher=Bash")
    assert re.search(r"PreToolUse +matcher=Bash +true +\(timeout 5s, /", shown), shown  # then the file: cut to fit
    screen = pane.screen()
    assert API_KEY not in screen and "secret-token-value-123" not in screen


def test_cost_and_status_count_a_teammate_in_its_own_process(start_repl: Start, config_root: Path) -> None:
    alice = {
        "name": "alice", "match": {"system": "Your name is alice"}, "idle": "alice idle.",
        "turns": [{**tool_turn("SendMessage", to="team-lead", message="ALICE-REPORT", summary="report"),
                   "usage": usage(7)}, approve_shutdown()],
    }  # fmt: skip
    lead = lead_route(
        tool_turn("TeamCreate", team_name="crew", description="a test team"),
        tool_turn("Task", name="alice", team_name="crew", prompt="Report in.", description="alice reports"),
        "SPAWNED-ALICE", {"wait_for": "ALICE-REPORT", "text": "LEAD-GOT-REPORT"},
    )  # fmt: skip
    args = ("--dangerously-skip-permissions", "--teammate-mode", "tmux", "build a team")  # the last mode wins
    pane, server = start_repl({"routes": [alice, lead]}, *args)
    pane.wait_text("⏺ LEAD-GOT-REPORT", timeout=START)
    pane.idle()
    presence = json.loads((config_root / "teams" / "crew" / "agents" / "alice.json").read_text(encoding="utf-8"))
    assert presence["backend"] == "tmux"  # a process of its own, in a pane of its own

    def figures_match() -> bool:
        """/cost once nothing runs: each row equals what the server answered (a request between the two
        readings means another try)."""
        before = len(server.requests)
        shown = run(pane, "/cost", "total")
        if len(server.requests) != before:
            return False
        assert cost_row(shown, "alice") == expected_row(server, "alice"), shown
        assert cost_row(shown, "team-lead") == expected_row(server, "lead"), shown
        return True

    wait_until(figures_match, 3 * STEP, "/cost while nothing runs", interval=0.2)
    assert "alice" in [r.get("route") for r in server.requests]
    assert "Team:             crew (1 teammate)" in run(pane, "/status", "Team:")
    pane.press("C-d")
    pane.wait_text("Shut down the team (1 teammate) before leaving? [Y/n]")
    pane.press("Enter")
    started = time.monotonic()
    pane.wait(lambda _s: pane.exit_status() is not None, "the lead to exit", timeout=40)
    assert pane.exit_status() == 0, f"exit after {time.monotonic() - started:.1f}s"


def test_print_mode_expands_a_custom_command_as_claude_code_does(cli: Cli, work: Path, config_root: Path) -> None:
    """`-p "/name args"` runs the custom command (Claude Code 2.1.330 does); another `/…` prompt is sent as given."""
    write(config_root / "commands" / "tidy.md", "---\nmodel: haiku\n---\nTIDY-BODY $ARGUMENTS\n")
    with MockServer({"routes": [lead_route("DONE-1", "DONE-2")]}).start() as server:
        env = {**child_env(config_root), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": API_KEY}
        first = cli("-p", "/tidy the kitchen", env=env, cwd=work, timeout=60)
        second = cli("-p", "/etc/hosts is a file", env=env, cwd=work, timeout=60)
        calls = model_calls(server)
    assert (first.returncode, first.stdout.strip(), second.stdout.strip()) == (0, "DONE-1", "DONE-2"), first.stderr
    assert calls[0]["model"] == "claude-haiku-5-5" and "TIDY-BODY the kitchen" in json.dumps(calls[0]["messages"])
    assert calls[1]["model"] == "claude-opus-5-5" and "/etc/hosts is a file" in json.dumps(calls[1]["messages"])


def test_compact_replaces_the_conversation_by_its_summary(start_repl: Start, work: Path, layout: Layout) -> None:
    from agentteams.agent.compaction import INSTRUCTION_MARK, NOTHING_TO_COMPACT

    summary_route = {"name": "summary", "match": {"last_prompt": INSTRUCTION_MARK},
                     "turns": ["MOCKSUMMARY of the REPL chat"]}  # fmt: skip
    pane, server = start_repl({"routes": [summary_route, lead_route("ANSWER-1", "ANSWER-2")]})
    pane.idle(timeout=START)
    assert NOTHING_TO_COMPACT in run(pane, "/compact", NOTHING_TO_COMPACT)
    pane.submit("FIRST-QUESTION")
    pane.wait_text("⏺ ANSWER-1")
    pane.idle()
    shown = run(pane, "/compact keep the questions", "Compacted")
    assert "goes on from a summary" in shown, shown
    ask = model_calls(server)[-1]
    assert "keep the questions" in json.dumps(ask["messages"][-1]) and "FIRST-QUESTION" in json.dumps(ask)
    pane.submit("SECOND-QUESTION")
    pane.wait_text("⏺ ANSWER-2")
    pane.idle()
    after = json.dumps(model_calls(server)[-1]["messages"])
    assert "MOCKSUMMARY of the REPL chat" in after and "FIRST-QUESTION" not in after and "SECOND-QUESTION" in after
    assert "/compact [instructions]" in run(pane, "/help", "Ctrl-D leaves")


def test_slash_mcp_lists_the_servers_and_their_state(start_repl: Start, work: Path, tmp_path: Path) -> None:
    from tests.support.mcp_lab import config, stdio_entry

    ready = tmp_path / "ready"
    ready.mkdir()
    write(work / ".mcp.json", config("proj", stdio_entry(ready)))  # not approved: listed, never started
    pane, _server = start_repl({"routes": []}, "--mcp-config", config("srv", stdio_entry(ready)))
    pane.idle(timeout=START)
    deadline = time.monotonic() + START
    while "connected, 3 tools" not in (shown := run(pane, "/mcp", "(stdio, flag)")):  # pending until it is up
        assert time.monotonic() < deadline and "failed" not in shown, shown
    assert "srv (stdio, flag) connected, 3 tools" in shown
    assert "proj (-, project) needs approval: add it to enabledMcpjsonServers" in " ".join(shown.split())
    assert len(list(ready.iterdir())) == 1  # one server started: srv


def test_a_task_call_runs_in_the_background_and_its_report_starts_a_turn(start_repl: Start) -> None:
    call = tool_turn("Task", description="look around", prompt="SUBTASK look", subagent_type="general-purpose")
    sub = {"name": "sub", "match": {"tools": True, "first_user": "SUBTASK"},
           "turns": [{"text": "SUB-REPORT", "delay_ms": 1500}]}  # fmt: skip
    pane, server = start_repl({"routes": [sub, lead_route(call, {"text": "LEAD-WAITING"},
                                                          {"text": "LEAD-NOTIFIED"})]})  # fmt: skip
    pane.idle(timeout=START)
    pane.submit("go")
    pane.wait_text("⏺ LEAD-WAITING")
    pane.wait_text("⏺ LEAD-NOTIFIED")  # no prompt typed: the subagent's notice started the turn
    lead = [b for b in model_calls(server) if "SUBTASK" not in json.dumps(b["messages"][0])]
    notice = json.dumps(lead[-1]["messages"][-1])
    assert "<task-notification>" in notice and "<result>SUB-REPORT</result>" in notice, notice
    assert "SUB-REPORT" not in json.dumps(lead[1]["messages"])  # the call itself answered at once
