"""Per-teammate spawn options and live changes, in process (issue 17, items 3 and 4): bad options are refused in
one line before anything starts; a teammate takes a mode or model change only in its lead's signed voice (a forged,
a replayed or a peer's change changes nothing); the lead refuses what a real `claude` teammate would not obey; the
`agentteams set` queue is answered by the running lead and refused without one."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, cast

import pytest

from agentteams.store.file.changes import FileChanges
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.protocol import ModelSetRequest, ModeSetRequest
from agentteams.store.signing import Keyring
from agentteams.tools.base import ToolInputError
from tests.support.cli import Cli
from tests.support.fake_model import FakeModel, text, tool
from tests.support.runtime import TEAM, WAIT, Events, quick_polls, running_lead, running_teammate, teammate_rig
from tests.support.wait import wait_until


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    quick_polls(monkeypatch)  # runtimes look at their files every 20 ms: they start and stop at once


def spawn(rig_runtime: Any, **args: Any) -> str:
    return str(rig_runtime.spawn_teammate({"prompt": "You are x.", **args}))


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ({"mode": "yolo"}, "unknown mode 'yolo'"),
        ({"mode": "bypassPermissions"}, "cannot bypass permissions while you do not"),
        ({"cwd": "no/such/dir"}, "is not a directory"),
        ({"cwd": ".", "isolation": "worktree"}, 'cwd and isolation: "worktree" cannot go together'),
        ({"disallowed_tools": ["Bash(rm:*"]}, "disallowed_tools: unclosed '('"),
        ({"allowed_tools": "Bash(git:*)"}, None),
        ({"allowed_tools": [3]}, "allowed_tools must be a list of permission rules"),
    ],
)
def test_bad_spawn_options_are_refused_in_one_line_before_anything_starts(
    tmp_path: Path, layout: Layout, args: dict[str, Any], said: str | None
) -> None:
    with running_lead(layout, tmp_path, FakeModel([])) as rig:
        if said is None:
            spawn(rig.runtime, name="ok", **args)
            assert rig.spawner.spawned[-1].allowed_tools == ["Bash(git:*)"]
            return
        with pytest.raises(ToolInputError) as caught:
            spawn(rig.runtime, name="bad", **args)
        assert said in str(caught.value) and "\n" not in str(caught.value)
        assert rig.teams.read(TEAM).member("bad") is None and not rig.spawner.spawned


def test_the_options_reach_the_teammate_and_its_member_entry(tmp_path: Path, layout: Layout) -> None:
    other = tmp_path / "other"
    (other / ".claude").mkdir(parents=True)
    (other / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["WebFetch"]}}))
    with running_lead(layout, tmp_path, FakeModel([])) as rig:
        spawn(rig.runtime, name="bob", cwd="other", mode="acceptEdits", model="haiku",
              allowed_tools=["Bash(npm test:*)"], disallowed_tools=["Bash(rm:*)", "WebFetch"])  # fmt: skip
        [req] = rig.spawner.spawned
        member = rig.teams.read(TEAM).member("bob")
    assert req.cwd == other.resolve() and req.permission_mode == "acceptEdits" and req.model == "claude-haiku-5-5"
    assert req.settings.permissions.deny == ("WebFetch",)  # the other project's settings, not the lead's
    assert member is not None and member.cwd == str(other.resolve()) and member.mode == "acceptEdits"
    assert member.allowed_tools == ["Bash(npm test:*)"] and member.disallowed_tools == ["Bash(rm:*)", "WebFetch"]
    assert member.model == "claude-haiku-5-5"


def test_a_teammate_takes_a_change_only_in_its_lead_s_signed_voice(tmp_path: Path, layout: Layout) -> None:
    lead_keys = Keyring()
    target = tmp_path / "out.txt"
    model = FakeModel([[text("One.")], [tool("Write", file_path=str(target), content="x")], [text("Refused.")]])
    rig = teammate_rig(layout, tmp_path, model, permission_mode="acceptEdits", peers=("mallory",),
                       lead_key=lead_keys.new_lead_key(TEAM, "alice"))  # fmt: skip
    lead, forger = Mailbox(layout, seal=lead_keys.seal), Mailbox(layout)
    to_plan = ModeSetRequest(mode="plan", sender=LEAD_NAME).to_text()
    lead.send(TEAM, "alice", "You are alice.", sender=LEAD_NAME)
    with running_teammate(rig):
        rig.wait_turns(1)
        forger.send(TEAM, "alice", to_plan, sender=LEAD_NAME)  # unsigned, in the lead's name
        forger.send(TEAM, "alice", to_plan, sender="mallory")  # a peer
        forger.send(TEAM, "alice", ModelSetRequest(model="haiku", sender=LEAD_NAME).to_text(), sender=LEAD_NAME)
        wait_until(lambda: not rig.mailbox.unread(TEAM, "alice"), WAIT, "alice to read the forgeries")
        assert rig.runtime.session.policy.mode == "acceptEdits" and rig.runtime.session.model != "claude-haiku-5-5"
        signed = lead.send(TEAM, "alice", to_plan, sender=LEAD_NAME)
        lead.send(TEAM, "alice", ModelSetRequest(model="haiku", sender=LEAD_NAME).to_text(), sender=LEAD_NAME)
        wait_until(lambda: rig.runtime.session.policy.mode == "plan", WAIT, "alice to take the signed change")
        wait_until(lambda: rig.member().model == "claude-haiku-5-5", WAIT, "the model change, recorded")
        assert rig.member().mode == "plan" and rig.runtime.session.model == "claude-haiku-5-5"
        rig.runtime.session.policy.mode = "acceptEdits"  # as if changed back, then the same signed entry again
        inbox = layout.inbox_file(TEAM, "alice")
        inbox.write_text(json.dumps([*json.loads(inbox.read_text()), signed.to_json()]))
        wait_until(lambda: not rig.mailbox.unread(TEAM, "alice"), WAIT, "alice to read the replay")
        assert rig.runtime.session.policy.mode == "acceptEdits", "a replayed change was taken"
        rig.runtime.session.policy.mode = "plan"
        lead.send(TEAM, "alice", "Write it.", sender=LEAD_NAME)
        rig.wait_turns(2)
    assert not target.exists() and "plan mode" in model.user_text(2)
    assert model.requests[1].model == "claude-haiku-5-5"
    assert "mode_set_request" not in json.dumps([model.user_text(n) for n in range(3)])  # never shown to the model


def test_the_lead_restarts_a_real_2_1_330_teammate_to_change_its_mode(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2.1.330 takes a mode only at its start: the lead restarts it at its pause (idle, nothing unread) in the new
    mode with its own session resumed and a new key; older ones get the frame; a model change restarts any claude."""
    from agentteams.team.lead import restarts as moderestart

    monkeypatch.setattr(moderestart, "WAIT_NOW", 0.3)
    with running_lead(layout, tmp_path, FakeModel([]), "carol") as rig:
        setter = rig.runtime.ctx.hooks.set_teammate
        assert setter is not None
        rig.teams.set_member_fields(TEAM, "carol", backend_type="tmux", is_active=True, session_id="sess-carol")
        assert "busy now, and will be restarted with permission mode plan" in setter("carol", "mode", "plan")
        assert [r.name for r in rig.spawner.spawned] == ["carol"]  # nothing restarted while it works
        rig.mailbox.send(TEAM, "carol", "one more thing", sender=LEAD_NAME)
        rig.teams.set_member_fields(TEAM, "carol", is_active=False)  # idle, but a message still to take
        assert "busy now" in setter("carol", "mode", "plan")
        Mailbox(layout).mark_delivered(TEAM, "carol", rig.mailbox.unread(TEAM, "carol"))  # she took it
        wait_until(lambda: len(rig.spawner.spawned) == 2, WAIT, "carol restarted at her pause")
        again = rig.spawner.spawned[-1]
        assert (again.name, again.permission_mode, again.resume) == ("carol", "plan", "sess-carol")
        assert again.lead_key is not None and rig.spawner.stopped == ["carol"]
        wait_until(lambda: getattr(rig.teams.read(TEAM).member("carol"), "mode", None) == "plan", WAIT, "the new mode")
        rig.teams.set_member_fields(TEAM, "carol", is_active=False)  # the new process went idle, as claude says
        assert "now has permission mode default: it was restarted" in setter("carol", "mode", "default")  # at once
        rig.teams.set_member_fields(TEAM, "carol", is_active=False)
        assert "now has model claude-haiku-5-5: it was restarted" in setter("carol", "model", "haiku")
        last = rig.spawner.spawned[-1]  # no claude takes a model from its inbox: restarted too, as it was but that
        assert (len(rig.spawner.spawned), last.model, last.permission_mode, last.resume) == (
            4, "claude-haiku-5-5", "default", "sess-carol")  # fmt: skip
        rig.spawner.takes_lead_key = False  # an older claude (2.1.197): it takes mode_set_request, unsigned
        assert "now plan" in setter("carol", "mode", "plan")
        with pytest.raises(ToolInputError, match="no teammate 'dave'"):
            setter("dave", "mode", "plan")
        with pytest.raises(ToolInputError, match="unknown mode"):
            setter("carol", "mode", "sideways")
        sent = [json.loads(e.text) for e in rig.mailbox.read_live(TEAM, "carol") if e.text.startswith("{")]
    assert {"type": "mode_set_request", "mode": "plan", "from": LEAD_NAME} in sent
    assert rig.teams.read(TEAM).member("carol").mode == "plan"  # type: ignore[union-attr]


def test_the_running_lead_answers_a_set_request_from_the_queue(tmp_path: Path, layout: Layout) -> None:
    events = Events()
    with running_lead(layout, tmp_path, FakeModel([]), "bob", events=events) as rig:
        rig.teams.set_member_fields(TEAM, "bob", backend_type="in-process")
        ok = FileChanges(layout).submit(TEAM, "bob", mode="plan", model="haiku")
        assert FileChanges(layout).wait_answer(TEAM, ok, WAIT) == (True, (
            "bob's permission mode is now plan, from its next tool call. bob uses claude-haiku-5-5 from its next "
            "turn on, with its conversation kept."))  # fmt: skip
        bad = FileChanges(layout).submit(TEAM, "bob", mode=None, model="gpt-9")
        answered = FileChanges(layout).wait_answer(TEAM, bad, WAIT)
        assert answered is not None and answered[0] is False and "gpt-9" in answered[1]
        types = [json.loads(e.text)["type"] for e in rig.mailbox.read_live(TEAM, "bob") if e.text.startswith("{")]
    assert types == ["mode_set_request", "agentteams_model_set_request"]
    [seen] = [e.text for e in events.items if e.kind == "notice"]  # the person sees what the shell changed
    assert seen.startswith("agentteams set: bob's permission mode is now plan")
    assert os.listdir(FileChanges(layout).queue_dir(TEAM)) == []


def test_set_refuses_in_one_line_without_a_running_lead(cli: Cli, layout: Layout, tmp_path: Path) -> None:
    from agentteams.store.file.teams import NewMember, TeamStore

    TeamStore(layout).create(TEAM, cwd=str(tmp_path))  # no leadProcess: as a lead that is gone
    TeamStore(layout).add_member(TEAM, NewMember(name="bob", cwd=str(tmp_path)))
    for args, said in (
        ([], "say what to change"),
        (["--mode", "fast"], "unknown mode 'fast'"),
        (["--mode", "plan"], f"the lead of team {TEAM} is not running"),
    ):
        proc = cli("set", TEAM, "bob", *args)
        assert proc.returncode == 1 and said in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    proc = cli("set", TEAM, "nobody", "--mode", "plan")
    assert proc.returncode == 1 and "no teammate 'nobody'" in proc.stderr
    assert not FileChanges(layout).queue_dir(TEAM).exists()


def test_a_headless_lead_is_not_settled_while_a_teammate_has_a_message_waiting(tmp_path: Path, layout: Layout) -> None:
    """A real `claude` teammate reads its inbox once a second: a `-p` lead that sent it work must not end first."""
    from agentteams.team import delivery
    from tests.support.builders import backdated

    model = FakeModel([], default=text("Noted."))
    with running_lead(layout, tmp_path, model, "alice") as rig:
        rig.idle("alice")
        wait_until(lambda: model.calls >= 1, WAIT, "the lead's turn for the idle team")
        rig.settle()
        assert rig.runtime.settled()
        env = rig.mailbox.send(TEAM, "alice", "WRITE-NOW", sender=LEAD_NAME)
        assert not rig.runtime.settled()
        rig.mailbox.mark_delivered(TEAM, "alice", [env])
        # taken, and its turn not shown yet: a real claude teammate writes isActive:true after it takes its mail
        assert not rig.runtime.settled()
        rig.teams.set_active(TEAM, "alice", True)
        assert not rig.runtime.settled()
        rig.teams.set_active(TEAM, "alice", False)
        assert rig.runtime.settled()
        keys = Keyring()
        keys.new_lead_key(TEAM, "alice")
        Mailbox(layout, seal=backdated(keys)).send(TEAM, "alice", "LONG-AGO", sender=LEAD_NAME)
        assert delivery.WAITING_SECONDS < 60 and rig.runtime.settled()  # left unread that long: a stuck teammate


def test_a_mode_change_applies_mid_turn_and_a_model_change_at_the_next_turn(tmp_path: Path, layout: Layout) -> None:
    lead_keys = Keyring()
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    rig_box: list[Mailbox] = []

    def change_now(n: int) -> None:
        if n == 0:  # while its first request is out: the Write it answers with still runs in acceptEdits
            rig_box[0].send(TEAM, "alice", ModeSetRequest(mode="plan", sender=LEAD_NAME).to_text(), sender=LEAD_NAME)
            rig_box[0].send(TEAM, "alice", ModelSetRequest(model="haiku", sender=LEAD_NAME).to_text(), sender=LEAD_NAME)

    model = FakeModel([
        [tool("Write", file_path=str(first), content="x")],
        [tool("Write", file_path=str(second), content="y")],
        [text("Stopped by plan mode.")],
        [text("Next turn.")],
    ], before_answer=change_now)  # fmt: skip
    rig = teammate_rig(layout, tmp_path, model, permission_mode="acceptEdits",
                       lead_key=lead_keys.new_lead_key(TEAM, "alice"))  # fmt: skip
    rig_box.append(Mailbox(layout, seal=lead_keys.seal))
    rig_box[0].send(TEAM, "alice", "Write both files.", sender=LEAD_NAME)
    with running_teammate(rig):
        rig.wait_turns(1)
        rig_box[0].send(TEAM, "alice", "Go on.", sender=LEAD_NAME)
        rig.wait_turns(2)
    assert first.exists() and not second.exists() and "plan mode" in model.user_text(2)
    models = [r.model for r in model.requests]
    assert models[3] == "claude-haiku-5-5" and "claude-haiku-5-5" not in models[:3], models  # not mid-turn


def test_a_resumed_teammate_keeps_its_directory_and_rules(tmp_path: Path, layout: Layout) -> None:
    other = tmp_path / "other"
    other.mkdir()
    with running_lead(layout, tmp_path, FakeModel([], default=text("noted"))) as rig:
        spawn(rig.runtime, name="bob", cwd="other", disallowed_tools=["Bash(rm:*)"], allowed_tools=["Bash(ls:*)"])
        rig.teams.set_member_fields(TEAM, "bob", session_id="bob-session")
        rig.spawner.kill("bob")
        wait_until(lambda: "bob" not in rig.members(), WAIT, "the lead to see bob die")
        rig.runtime.spawn_teammate({"name": "bob", "team_name": TEAM, "resume": True, "prompt": "Go on."})
        back = rig.spawner.spawned[-1]
    assert back.resume == "bob-session" and back.cwd == other.resolve()
    assert back.disallowed_tools == ["Bash(rm:*)"] and back.allowed_tools == ["Bash(ls:*)"]


def test_a_teammate_in_another_directory_takes_that_directory_s_agent_types(tmp_path: Path, layout: Layout) -> None:
    from agentteams.tools.subagent import TaskTool

    agents = tmp_path / "other" / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "rev.md").write_text("---\nname: reviewer\ndescription: reviews\nmodel: haiku\n---\nREVIEW\n")
    with running_lead(layout, tmp_path, FakeModel([])) as rig:
        with pytest.raises(ToolInputError, match="unknown subagent_type 'reviewer' in"):
            spawn(rig.runtime, name="bad", subagent_type="reviewer")  # the lead's own directory has no such type
        spawn(rig.runtime, name="bob", cwd="other", subagent_type="reviewer")
        [req] = rig.spawner.spawned
        member = rig.teams.read(TEAM).member("bob")
        ctx = rig.runtime.ctx
        said = TaskTool().run({"prompt": "p", "description": "d", "cwd": "other"}, ctx)
    assert (req.agent_type, req.model) == ("reviewer", "claude-haiku-5-5")
    assert member is not None and member.agent_type == "reviewer"
    assert said.is_error and "cwd is for a teammate" in said.content


def test_set_gives_up_in_one_line_when_no_lead_of_ours_answers(cli: Cli, layout: Layout, tmp_path: Path) -> None:
    """A lead that runs but takes no requests (a real `claude`): nothing is left queued, nothing changed."""
    from agentteams.pids import LeadProcess
    from agentteams.store.file.teams import NewMember, TeamStore
    from agentteams.store.fs.atomic_json import epoch_ms

    TeamStore(layout).create(TEAM, cwd=str(tmp_path), lead_process=LeadProcess.for_this_process(epoch_ms()))
    TeamStore(layout).add_member(TEAM, NewMember(name="bob", cwd=str(tmp_path)))
    proc = cli("set", TEAM, "bob", "--model", "haiku", "--wait", "0.3")
    assert proc.returncode == 1 and "did not answer within 0.3 s" in proc.stderr, proc.stderr
    assert "nothing was changed" in proc.stderr
    assert os.listdir(FileChanges(layout).queue_dir(TEAM)) == []


@pytest.mark.parametrize(("line", "ours"), [("agentteams 0.1.0", True), ("2.1.330 (Claude Code)", False)])
def test_the_lead_knows_its_tmux_teammates_are_ours_before_they_say_so(
    tmp_path: Path, layout: Layout, line: str, ours: bool
) -> None:
    """Right after a spawn a teammate has written neither presence nor key: the program the lead starts tells."""
    from agentteams.store.opener import open_store
    from agentteams.team.lead.live_changes import LiveChanges
    from agentteams.team.spawn.spawners import TmuxSpawner
    from tests.support.spawn_fakes import fake_program

    with running_lead(layout, tmp_path, FakeModel([]), "bob") as rig:
        rig.teams.set_member_fields(TEAM, "bob", backend_type="tmux")
        spawner = TmuxSpawner(open_store(layout), socket_path=str(tmp_path / "none.sock"),
                              command=fake_program(tmp_path, line))  # fmt: skip
        assert spawner.runs_ours is ours
        # the lead's team thread checks liveness through its spawner: this one has no tmux server behind it
        spawner.alive = lambda handle, team: True  # type: ignore[method-assign]
        rig.runtime.restarts.spawner = cast(Any, spawner)  # a Spawner: its takes_lead_key is a property
        member = rig.teams.read(TEAM).member("bob")
        assert member is not None
        assert LiveChanges(rig.runtime.restarts, lambda: TEAM)._ours(TEAM, member) is ours
