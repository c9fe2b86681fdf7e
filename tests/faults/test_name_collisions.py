"""Member names that would share an inbox (issue 14, item 4): names are compared by the inbox file they address
(`a/b`, `A-B` and `a-b` all address `a-b.json`), so a second one gets `-2`; control characters and NUL are refused
at every entrance (store, CLI, tools) in one line, and never stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentteams.errors import InvalidNameError
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.store import FileStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.tools.base import ToolContext, ToolInputError
from agentteams.tools.team.team_tools import SendMessageTool
from tests.support.cli import Cli
from tests.support.fake_model import FakeModel
from tests.support.fault_ledger import FaultLedger
from tests.support.runtime import running_lead

CONTROL = ["a\nb", "a\tb", "a\0b", "a\x7fb", "a\rb", "trailing\n"]


def test_names_that_address_one_inbox_get_suffixes_and_keep_their_messages_apart(
    layout: Layout, ledger: FaultLedger
) -> None:
    teams, mail = TeamStore(layout), Mailbox(layout)
    teams.create("t")
    names = [teams.add_member("t", NewMember(name=n)).name for n in ["a-b", "a/b", "A-B", "a@b", "a b"]]
    assert names == ["a-b", "a/b-2", "A-B-3", "a-b-4", "a b-5"]
    inboxes = {layout.inbox_file("t", n).name.lower() for n in names}
    assert len(inboxes) == len(names), inboxes
    for name in names:
        ledger.writes += 1
        mail.send("t", name, f"for {name}", sender="team-lead")
    for name in names:
        got = [e.text for e in mail.read_live("t", name)]
        ledger.duplicates += len([t for t in got if t != f"for {name}"])  # another member's message, read here
        ledger.lost += 0 if f"for {name}" in got else 1


@pytest.mark.parametrize("bad", CONTROL, ids=[repr(c) for c in CONTROL])
def test_control_characters_are_refused_by_the_store(layout: Layout, bad: str, ledger: FaultLedger) -> None:
    teams, mail = TeamStore(layout), Mailbox(layout)
    teams.create("t")
    teams.add_member("t", NewMember(name="a-b"))
    ledger.faults += 1
    with pytest.raises(InvalidNameError, match="control character") as joined:
        teams.add_member("t", NewMember(name=bad))
    assert len(str(joined.value).splitlines()) == 1
    with pytest.raises(InvalidNameError, match="control character"):
        mail.send("t", bad, "hi", sender="team-lead")
    with pytest.raises(InvalidNameError, match="control character"):
        mail.send("t", "a-b", "hi", sender=bad)
    with pytest.raises(InvalidNameError, match="control character"):
        teams.create(bad)
    config = json.loads(layout.config_file("t").read_text())
    assert [m["name"] for m in config["members"]] == ["team-lead", "a-b"]
    assert mail.read_live("t", "a-b") == []


def test_control_characters_are_refused_by_the_cli(cli: Cli, config_root: Path, ledger: FaultLedger) -> None:
    store = FileStore(Layout(config_root))
    store.teams.create("t")
    store.teams.add_member("t", NewMember(name="a-b"))
    runs = [
        ("msg", "send", "t", "a\nb", "hi"),
        ("msg", "send", "t", "a-b", "hi", "--from", "x\ty"),
        ("msg", "read", "t", "a\tb"),
        ("team", "create", "new\nteam"),
        ("task", "update", "t", "1", "--owner", "a\x1bb"),
    ]
    store.tasks.create("t", "first")
    for run in runs:
        ledger.faults, ledger.writes = ledger.faults + 1, ledger.writes + 1
        proc = cli(*run)
        assert proc.returncode != 0, run
        line = proc.stderr.strip()
        assert len(line.splitlines()) == 1 and "control character" in line, line
    assert store.mail.read_live("t", "a-b") == []
    assert store.tasks.get("t", "1").owner is None
    assert [c.name for c in store.teams.list_teams() if not isinstance(c, Exception)] == ["t"]


def test_control_characters_are_refused_by_send_message(layout: Layout, tmp_path: Path, ledger: FaultLedger) -> None:
    store = FileStore(layout)
    store.teams.create("t")
    store.teams.add_member("t", NewMember(name="a-b"))
    lead = ToolContext(cwd=tmp_path, store=store, session_id="s", team_name="t")
    ledger.faults, ledger.writes = 1, 1
    result = SendMessageTool().run({"to": "a\nb", "message": "hi", "summary": "s"}, lead)
    assert result.is_error and "control character" in result.content and "\n" not in result.content.strip()
    assert store.mail.read_live("t", "a-b") == []


def test_control_characters_are_refused_by_the_spawn_tool(layout: Layout, tmp_path: Path, ledger: FaultLedger) -> None:
    with running_lead(layout, tmp_path, FakeModel([])) as lead:
        for bad in CONTROL:
            ledger.faults += 1
            with pytest.raises(ToolInputError, match="control character"):
                lead.runtime.spawn_teammate({"name": bad, "prompt": "work"})
        assert lead.members() == [LEAD_NAME]
