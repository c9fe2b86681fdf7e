"""Slash commands without a terminal: the custom-command loader and expansion (as Claude Code 2.1.330 expands
them, learnt from the real CLI against the scripted server), the built-in table and its dispatch, run against a
real lead runtime with a scripted in-memory model, and /cost's reading of a teammate's transcript."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentteams.agent.session import TurnExtras
from agentteams.model.pricing import cost_usd
from agentteams.model.types import Usage
from agentteams.settings.commands import CommandSet, expand, invocation, load_commands, split_arguments
from agentteams.store.paths import Layout
from agentteams.store.presence import Presence
from agentteams.store.transcripts.writer import AssistantMeta, Transcript
from agentteams.team.delivery import TeamEvent
from agentteams.team.lead.costs import transcript_ledger
from agentteams.ui.commands import BUILTINS, CommandContext, builtin, help_text, run_command
from agentteams.ui.render import Renderer, make_console
from agentteams.ui.team_view import TeamView
from tests.support.fake_model import FakeModel, text, tool
from tests.support.runtime import TEAM, WAIT, LeadRig, quick_polls, running_lead


@pytest.fixture(autouse=True)
def _quick(monkeypatch: pytest.MonkeyPatch) -> None:
    quick_polls(monkeypatch)


def write(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


# -- expansion ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "args", "expected"),
    [
        ("Fix $ARGUMENTS now", "123 high", "Fix 123 high now"),
        ("first=$0 second=$1", 'alice "bob c" d', "first=alice second=bob c"),  # $0 is the first (2.1.330)
        ("idx=$ARGUMENTS[1]", "a b", "idx=b"),
        ("one=$1 ten=$10", "a", "one=$1 ten=$10"),  # past the last argument: left as written
        ("$$1", "a b", "$b"),
        ("No placeholder", "q r", "No placeholder\n\nARGUMENTS: q r"),
        ("Keep $ARGUMENTS and $0", "", "Keep $ARGUMENTS and $0"),  # no arguments: nothing changes
        ("all=[$ARGUMENTS] one=[$0]", "it's broken", "all=[it's broken] one=[it's]"),  # bad quoting: plain words
    ],
)
def test_expansion_follows_claude_code(body: str, args: str, expected: str) -> None:
    assert expand(body, args) == expected


def test_split_arguments_groups_quoted_words() -> None:
    assert split_arguments("a 'b c' \"d e\" f") == ["a", "b c", "d e", "f"]
    assert split_arguments('open "quote') == ["open", '"quote']


# -- the loader ---------------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "repo" / "sub"
    work.mkdir(parents=True)
    return work


def test_loader_reads_project_user_and_namespaced_commands(project: Path, config_root: Path) -> None:
    commands = project.parent / ".claude" / "commands"  # the repository's, found from a subdirectory
    write(commands / "greet.md", "---\ndescription: Greet\nargument-hint: <name>\nmodel: haiku\n---\nHi $0\n")
    write(commands / "frontend" / "comp.md", "Build $ARGUMENTS\n")
    write(commands / "notes.txt", "not a command")
    write(config_root / "commands" / "mine.md", "---\nallowed-tools: Read, Bash(git:*)\n---\nMine\n")
    found = load_commands(project, config_root)
    assert list(found.commands) == ["frontend:comp", "greet", "mine"] and found.problems == ()
    greet, comp, mine = found.commands["greet"], found.commands["frontend:comp"], found.commands["mine"]
    assert (greet.scope, greet.description, greet.argument_hint, greet.model) == ("project", "Greet", "<name>", "haiku")
    assert (comp.label, comp.summary()) == ("(project:frontend)", "Build $ARGUMENTS")
    assert (mine.label, mine.allowed_tools) == ("(user)", ("Read, Bash(git:*)",))
    assert greet.prompt("bob") == (
        "<command-message>greet</command-message>\n<command-name>/greet</command-name>\n"
        "<command-args>bob</command-args>\n\nHi bob\n"
    )
    assert "<command-args>" not in greet.prompt("")


def test_on_a_clash_the_user_command_wins_then_the_nearest_project(project: Path, config_root: Path) -> None:
    write(project / ".claude" / "commands" / "near.md", "NEAR")
    write(project.parent / ".claude" / "commands" / "near.md", "FAR")
    write(project / ".claude" / "commands" / "both.md", "PROJECT")
    write(config_root / "commands" / "both.md", "USER")  # what Claude Code 2.1.330 ran
    found = load_commands(project, config_root)
    assert found.commands["near"].body == "NEAR" and found.commands["both"].body == "USER"


def test_a_broken_command_file_is_one_line_and_the_others_load(project: Path, config_root: Path) -> None:
    bad = write(project / ".claude" / "commands" / "bad.md", "---\ndescription: [unclosed\n---\nbody")
    write(project / ".claude" / "commands" / "good.md", "fine")
    found = load_commands(project, config_root)
    assert list(found.commands) == ["good"]
    assert len(found.problems) == 1 and str(bad) in found.problems[0] and "skipped" in found.problems[0]


def test_invocation_finds_only_a_custom_command_at_the_start(project: Path, config_root: Path) -> None:
    write(project / ".claude" / "commands" / "greet.md", "Hi")
    found = load_commands(project, config_root)
    hit = invocation("/greet  a 'b c'\nmore", found)
    assert hit is not None and hit[0].name == "greet" and hit[1] == "a 'b c'\nmore"
    assert invocation("/other x", found) is None and invocation("say /greet", found) is None


# -- the built-in table -------------------------------------------------------------------------------


def test_the_table_has_each_command_once_with_a_help_line() -> None:
    names = [n for c in BUILTINS for n in (c.name, *c.aliases)]
    assert len(names) == len(set(names)) and all(n.startswith("/") for n in names)
    assert all(c.help for c in BUILTINS)
    wanted = {"/model", "/clear", "/cost", "/status", "/permissions", "/config", "/memory", "/team", "/help", "/exit",
              "/agents", "/hooks"}  # fmt: skip
    assert wanted <= set(names)
    assert builtin("/QUIT") is builtin("/exit") and builtin("/nope") is None


def test_help_lists_every_builtin_and_custom_command(project: Path, config_root: Path) -> None:
    write(project / ".claude" / "commands" / "ns" / "deep.md", "---\ndescription: Deep one\n---\nx")
    write(config_root / "commands" / "help.md", "my help")
    shown = help_text(load_commands(project, config_root))
    for command in BUILTINS:
        assert command.name in shown
    assert "/ns:deep" in shown and "Deep one (project:ns)" in shown
    assert "my help (user) · shadowed by the built-in" in shown
    assert "not loaded" not in help_text(CommandSet())


# -- dispatch against a running lead ------------------------------------------------------------------


class Repl:
    """What the REPL does with a line, and what it printed."""

    def __init__(self, rig: LeadRig) -> None:
        self.rig = rig
        self.out = io.StringIO()

        def submit(prompt: str, extras: TurnExtras | None) -> None:
            rig.runtime.submit(prompt, extras)

        self.ctx = CommandContext(rig.runtime, TeamView(), Renderer(make_console(False, self.out)), submit)

    def line(self, line: str) -> str:
        """Run `line`; what it printed. A plain prompt is submitted, as the REPL does."""
        start = len(self.out.getvalue())
        if run_command(line, self.ctx) == "submit":
            self.rig.runtime.submit(line)
        assert self.rig.runtime.wait_idle(WAIT)
        return self.out.getvalue()[start:]


@pytest.fixture
def repl(tmp_path: Path, layout: Layout) -> Iterator[Repl]:
    model = FakeModel([], default=[text("OK")])
    with running_lead(layout, tmp_path, model, "alice") as rig:
        yield Repl(rig)


def test_unknown_commands_are_an_error_line_and_paths_stay_prompts(repl: Repl) -> None:
    for line in ("/nosuch", "/nosuch with arguments", "/Nope:x y"):
        assert "unknown command" in repl.line(line)
    assert repl.rig.model.calls == 0
    repl.line("/usr/bin/env is a path")
    assert repl.rig.model.calls == 1 and repl.rig.model.user_text(0).endswith("/usr/bin/env is a path")


def test_model_switches_the_next_request_and_takes_any_name(repl: Repl) -> None:
    assert "Model: claude-opus-5-5 (opus)" in repl.line("/model")  # Claude Code 2.1.330's default
    assert "Set model to gpt-4: used" in repl.line("/model gpt-4")  # 2.1.332 sends any name as given
    repl.line("hello")
    assert repl.rig.model.requests[-1].model == "gpt-4"
    assert "Set model to sonnet (claude-sonnet-5-5)" in repl.line("/model sonnet")
    repl.line("hello")
    request = repl.rig.model.requests[-1]
    assert request.model == "claude-sonnet-5-5" and "model: claude-sonnet-5-5" in request.system
    assert repl.rig.runtime.session.ctx.hooks.model == "claude-sonnet-5-5"  # teammates spawned from now on


def test_clear_starts_a_new_session_and_keeps_the_team(repl: Repl) -> None:
    session = repl.rig.runtime.session
    repl.line("before clearing")
    old_id, old_transcript = session.options.session_id, session.transcript.path
    shown = repl.line("/clear")
    new_id = session.options.session_id
    assert new_id != old_id and f"new session {new_id}; team {TEAM} stays" in shown
    repl.line("after clearing")
    messages = repl.rig.model.requests[-1].messages
    assert len(messages) == 1 and "before clearing" not in json.dumps(messages)
    assert f"You still lead team {TEAM} (teammates: alice)" in repl.rig.model.user_text(1)
    assert session.transcript.path != old_transcript and "after clearing" in session.transcript.path.read_text()
    assert "after clearing" not in old_transcript.read_text()
    presence = repl.rig.runtime.store.presence.read(TEAM, "team-lead")
    assert repl.rig.runtime.team == TEAM and presence is not None and presence.session_id == new_id  # for `logs`


def test_resume_lists_this_directory_s_sessions_and_goes_on_with_one(repl: Repl) -> None:
    session = repl.rig.runtime.session
    assert "No other conversation of this directory" in repl.line("/resume")
    repl.line("FIRST-CONVERSATION prompt")
    first_id = session.options.session_id
    repl.line("/clear")
    repl.line("second conversation")
    shown = repl.line("/resume")
    assert "1." in shown and "FIRST-CONVERSATION prompt" in shown and first_id in shown and "ago" in shown
    assert "No session 'x9' in the list" in repl.line("/resume x9")
    shown = repl.line("/resume 1")
    assert f"Resumed session {first_id} (2 messages)" in shown and session.options.session_id == first_id
    repl.line("going on")
    sent = json.dumps(repl.rig.model.requests[-1].messages)
    assert "FIRST-CONVERSATION prompt" in sent and "second conversation" not in sent
    text = session.transcript.path.read_text()
    assert session.transcript.path.stem == first_id and "going on" in text
    presence = repl.rig.runtime.store.presence.read(TEAM, "team-lead")
    assert presence is not None and presence.session_id == first_id  # `logs` finds the lead's file


def test_a_custom_command_reaches_the_model_expanded_with_its_model(repl: Repl, tmp_path: Path) -> None:
    write(tmp_path / ".claude" / "commands" / "greet.md", "---\nmodel: haiku\n---\nGreet $0 ($ARGUMENTS)")
    write(tmp_path / ".claude" / "commands" / "help.md", "NOT THE BUILT-IN")
    repl.line("/greet bob 'very happy'")
    request = repl.rig.model.requests[-1]
    assert request.model == "claude-haiku-5-5"
    assert "<command-name>/greet</command-name>" in repl.rig.model.user_text(0)
    assert "Greet bob (bob 'very happy')" in repl.rig.model.user_text(0)
    repl.line("next")
    assert repl.rig.model.requests[-1].model == "claude-opus-5-5"  # only that turn
    assert "/clear" in repl.line("/help") and repl.rig.model.calls == 2  # the built-in won: nothing was sent


def test_allowed_tools_hold_for_the_command_s_turn_only(tmp_path: Path, layout: Layout) -> None:
    # python3, not echo: a read-only command such as echo runs without any rule (as the real CLI runs it)
    write(tmp_path / ".claude" / "commands" / "hi.md", "---\nallowed-tools: Bash(python3:*), Read\n---\nSay hi")
    write(tmp_path / ".claude" / "commands" / "bad.md", "---\nallowed-tools: Bash(oops\n---\nx")
    run_echo = [tool("Bash", command="python3 -c \"print('hi-from-bash')\""), text("done")]
    model = FakeModel([run_echo[:1], run_echo[1:], run_echo[:1], run_echo[1:]])
    with running_lead(layout, tmp_path, model) as rig:  # not interactive: a Bash call needs an allow rule
        repl = Repl(rig)
        repl.line("/hi")
        assert "hi-from-bash" in json.dumps(model.requests[1].messages[-1])  # it ran
        assert not [r for r in rig.runtime.session.policy.allowed if "allowed-tools of /hi" in r.origin]
        repl.line("again, without the command")
        assert "needs permission" in json.dumps(model.requests[3].messages[-1])  # the rule went with the turn
        assert "unclosed '('" in repl.line("/bad") and model.calls == 4
        write(tmp_path / ".claude" / "commands" / "broken.md", "---\nnever closed\n")
        assert "broken.md:1: the front matter block opened by '---' is never closed" in repl.line("/broken x")


def test_cost_reads_a_teammate_s_transcript(repl: Repl, layout: Layout, tmp_path: Path) -> None:
    spent = Usage(input_tokens=1200, output_tokens=340, cache_creation_input_tokens=56, cache_read_input_tokens=7)
    alice = Transcript(layout.transcript_file(tmp_path, "alice-session"), "alice-session", cwd=str(tmp_path))
    for i, agent in enumerate(("alice", "alice", "alice/Explore")):
        alice.assistant(agent, [], AssistantMeta(f"msg_{i}", "claude-opus-4-8", "end_turn", spent.to_json()))
    repl.rig.runtime.store.presence.write(TEAM, "alice", Presence(pid=1, session_id="alice-session", backend="tmux"))
    bob = Transcript(layout.transcript_file(tmp_path, "bob-session"), "bob-session", cwd=str(tmp_path), team=TEAM)
    bob.assistant("bob", [], AssistantMeta("msg_b", "claude-opus-4-8", "end_turn", spent.to_json()))
    repl.ctx.view.update(TeamEvent("joined", "bob", "tmux"))  # joined during this session, and has left since
    repl.line("hello")
    shown = repl.line("/cost").splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in shown[2:]}
    dollars = cost_usd("claude-opus-4-8", spent)
    assert rows["alice"] == ["2", "2,400", "680", "112", "14", f"${2 * dollars:.4f}"]
    assert rows["alice/Explore"] == ["1", "1,200", "340", "56", "7", f"${dollars:.4f}"]
    assert rows["bob"] == ["1", "1,200", "340", "56", "7", f"${dollars:.4f}"]
    assert rows["team-lead"][:3] == ["1", "10", "5"]  # FakeModel's usage
    assert rows["total"][:2] == ["5", f"{4 * 1200 + 10:,}"]


def test_transcript_ledger_skips_torn_lines_and_names_claude_code_entries(tmp_path: Path) -> None:
    usage = {"input_tokens": 3, "output_tokens": 4}
    lines = [
        json.dumps({"type": "assistant", "message": {"model": "claude-sonnet-4-6", "usage": usage}}),  # no agent
        json.dumps({"type": "user", "message": {"content": "hi"}}),
        '{"type": "assistant", "mess',
    ]
    path = write(tmp_path / "t.jsonl", "\n".join(lines))
    account = transcript_ledger(path, "bob").account("bob")
    assert (account.requests, account.usage.input_tokens, account.usage.output_tokens) == (1, 3, 4)
