"""The team store: create, members, colours, flags and delete."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentteams.errors import ConflictError, CorruptFileError, NotFoundError
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.paths import Layout
from agentteams.store.records import COLORS
from tests.support.fault_ledger import FaultLedger


def test_create_sets_up_dirs_and_lead(layout: Layout) -> None:
    config = TeamStore(layout).create("Alpha Team", description="d", lead_session_id="s1", lead_model="m")
    assert config.name == "alpha-team"
    assert config.lead_agent_id == "team-lead@alpha-team"
    assert [m.name for m in config.members] == ["team-lead"]
    assert layout.inbox_dir("alpha-team").is_dir()
    assert layout.task_lock_target("alpha-team").read_bytes() == b""
    assert TeamStore(layout).read("alpha-team") == config


def test_taken_names_get_a_suffix(layout: Layout) -> None:
    teams = TeamStore(layout)
    assert [teams.create("x").name for _ in range(3)] == ["x", "x-2", "x-3"]


def test_members_get_unique_names_and_palette_colours(layout: Layout) -> None:
    teams = TeamStore(layout)
    teams.create("t")
    added = [teams.add_member("t", NewMember(name="dev")) for _ in range(3)]
    assert [m.name for m in added] == ["dev", "dev-2", "dev-3"]
    assert [m.agent_id for m in added] == ["dev@t", "dev-2@t", "dev-3@t"]
    assert [m.color for m in added] == list(COLORS[:3])
    teams.remove_member("t", "dev-2")
    assert teams.add_member("t", NewMember(name="new")).color == COLORS[1]  # a freed colour is reused


def test_remove_by_name_or_id_and_lead_stays(layout: Layout) -> None:
    teams = TeamStore(layout)
    teams.create("t")
    teams.add_member("t", NewMember(name="a"))
    teams.add_member("t", NewMember(name="b"))
    assert teams.remove_member("t", "a@t") is not None
    assert teams.remove_member("t", "b") is not None
    assert teams.remove_member("t", "nobody") is None
    with pytest.raises(ConflictError):
        teams.remove_member("t", "team-lead")
    assert [m.name for m in teams.read("t").members] == ["team-lead"]


def test_flags_and_mode(layout: Layout) -> None:
    teams = TeamStore(layout)
    teams.create("t")
    teams.add_member("t", NewMember(name="a"))
    teams.set_active("t", "a", True)
    teams.set_mode("t", "a", "plan")
    member = teams.read("t").member("a")
    assert member is not None and member.is_active is True and member.mode == "plan"
    with pytest.raises(NotFoundError):
        teams.set_active("t", "zed", False)


def test_unknown_keys_survive_updates(layout: Layout) -> None:
    teams = TeamStore(layout)
    teams.create("t")
    path = layout.config_file("t")
    text = path.read_text().replace('"members": [', '"futureKey": {"x": [1, 2]},\n  "members": [', 1)
    path.write_text(text)
    teams.add_member("t", NewMember(name="a"))
    assert '"futureKey": {\n    "x": [\n      1,\n      2\n    ]\n  },\n  "members"' in path.read_text()


def test_delete_refuses_with_members_then_removes_the_team_files(layout: Layout, tmp_path: Path) -> None:
    teams = TeamStore(layout)
    teams.create("t")
    TaskStore(layout).create("t", "a task")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q",
                    "--allow-empty", "-m", "init"], check=True)  # fmt: skip
    worktree = tmp_path / "wt"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(worktree)], check=True)
    teams.add_member("t", NewMember(name="a"))
    teams.set_member_fields("t", "a", worktree_path=str(worktree))
    with pytest.raises(ConflictError, match="still has members: a"):
        teams.delete("t")
    assert layout.team_dir("t").is_dir()
    assert teams.delete("t", force=True) == []
    assert not layout.team_dir("t").exists()
    assert not layout.task_dir("t").exists()
    assert worktree.exists()  # never forced away here: tools/team/worktree_git.py removes clean ones, keeps dirty ones
    with pytest.raises(NotFoundError):
        teams.delete("t")


def test_a_read_that_catches_a_writer_mid_write_waits_for_its_lock(layout: Layout) -> None:
    """A real `claude` rewrites config.json in place while holding its lock: a reader must not take the half
    written file for a corrupt one."""
    import json
    import threading

    from agentteams.store.fs.locking import locked

    teams = TeamStore(layout)
    teams.create("t")
    path = layout.config_file("t")
    whole = json.dumps({**json.loads(path.read_text()), "description": "rewritten"}, indent=2).encode()
    halfway, release = threading.Event(), threading.Event()

    def writer() -> None:
        with locked(path), open(path, "wb") as f:
            f.write(whole[: len(whole) // 2])
            f.flush()
            halfway.set()
            release.wait(10)
            f.write(whole[len(whole) // 2 :])

    thread = threading.Thread(target=writer)
    thread.start()
    assert halfway.wait(10)
    threading.Timer(0.3, release.set).start()
    try:
        assert teams.read("t").description == "rewritten"
    finally:
        release.set()
        thread.join(10)


def test_peek_shares_one_parse_while_the_bytes_are_the_same_and_sees_every_change(layout: Layout) -> None:
    """A woken teammate and a sender look at the config through `peek`: parsed again only when its bytes changed,
    even by a rewrite in place of the same size within the same clock tick (no stat-based guess)."""
    import json

    teams = TeamStore(layout)
    teams.create("t")
    teams.add_member("t", NewMember(name="dev"))
    first = teams.peek("t")
    assert teams.peek("t") is first and first == teams.read("t")
    path = layout.config_file("t")
    data = json.loads(path.read_text())
    data["members"][1]["color"] = "zzzzz"[: len(data["members"][1]["color"])]  # same size, in place
    path.write_text(json.dumps(data, indent=2))
    changed = teams.peek("t")
    assert changed is not first and changed.member("dev") is not None
    assert changed.member("dev").color == data["members"][1]["color"]  # type: ignore[union-attr]
    teams.add_member("t", NewMember(name="qa"))  # by rename, as our writers do
    assert [m.name for m in teams.peek("t").members] == ["team-lead", "dev", "qa"]
    path.write_text("{not json")
    with pytest.raises(CorruptFileError):
        teams.peek("t")  # a damaged config is reported as read() reports it, never the last good one
    path.unlink()
    with pytest.raises(NotFoundError):
        teams.peek("t")


def test_a_null_that_was_read_is_written_back_and_a_cleared_value_is_not(layout: Layout) -> None:
    """Lossless: `"model": null` in a member a real `claude` wrote survives our rewrite of the config."""
    import json

    teams = TeamStore(layout)
    teams.create("t")
    teams.add_member("t", NewMember(name="alice", model="claude-opus-5-5"))
    path = layout.config_file("t")
    raw = json.loads(path.read_text())
    raw["members"][1]["model"] = None
    raw["members"][1]["prompt"] = None
    path.write_text(json.dumps(raw, indent=2))
    teams.set_member_fields("t", "alice", is_active=True, prompt="now set")
    member = json.loads(path.read_text())["members"][1]
    assert "model" in member and member["model"] is None and member["prompt"] == "now set"
    assert teams.read("t").member("alice").model is None  # type: ignore[union-attr]


def test_delete_outlasts_departing_teammates_still_writing_their_presence(layout: Layout) -> None:
    """Teammates that approved their shutdown write their last presence records (a temporary file, then a rename)
    while the lead deletes the team: an entry vanishing or appearing mid-walk must not leave the team dir behind."""
    import threading

    from agentteams.store.presence import Presence, write_presence

    teams = TeamStore(layout)
    for round_ in range(20):
        teams.create("t")
        go = threading.Barrier(4)

        def departing(name: str, go: threading.Barrier = go) -> None:
            go.wait(5)
            for _ in range(100):  # a last burst, as a process on its way out writes it
                write_presence(layout, "t", name, Presence(pid=1, session_id="s", backend="tmux", state="exited"))

        writers = [threading.Thread(target=departing, args=(n,)) for n in ("alice", "bob", "carol")]
        for w in writers:
            w.start()
        go.wait(5)
        try:
            assert teams.delete("t", force=True) == []
        finally:
            for w in writers:
                w.join(10)
        assert not layout.team_dir("t").exists(), f"round {round_}: the team dir was left behind"


def test_a_new_team_never_inherits_a_task_list_its_namesake_left_behind(layout: Layout, ledger: FaultLedger) -> None:
    import shutil

    teams, tasks = TeamStore(layout), TaskStore(layout)
    teams.create("t")
    tasks.create("t", "the old team's work")
    shutil.rmtree(layout.team_dir("t"))  # the team went, its task list stayed (a crash between the two removals)
    fresh = teams.create("t")
    ledger.faults, ledger.stranded = 1, len(tasks.list_tasks(fresh.name))  # the old work, handed to a new team
    assert fresh.name == "t-2" and tasks.list_tasks("t-2") == []
    assert [t.subject for t in tasks.list_tasks("t")] == ["the old team's work"]  # left for a person to look at
    assert teams.create("u").name == "u"  # an empty or missing task list takes nothing
