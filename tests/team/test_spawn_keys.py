"""The lead's key for each teammate: on the command line of a program that takes it (ours, a real `claude` from
2.1.330; never an older one, which exits on an unknown option), in memory for in-process ones, dropped with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentteams.agent.session import Session, SessionOptions
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.signing import LEAD_DOMAIN, LEAD_SIG, Keyring, LeadVerifyKey, verifies
from agentteams.team.spawn.base import SpawnRequest, teammate_argv
from agentteams.team.spawn.member import spawn_member
from agentteams.team.spawn.version_probe import VersionProbe
from agentteams.tools.base import ToolInputError
from tests.support.fake_model import FakeModel
from tests.support.spawn_fakes import FailingSpawner, KeptSpawner, fake_program

TEAM = "keys"


@pytest.mark.parametrize(
    ("line", "takes"),
    [("2.1.330 (Claude Code)", True), ("2.2.0 (Claude Code)", True), ("2.1.197 (Claude Code)", False),
     ("agentteams 0.1.0", True), ("something else 9.9.9", False), ("", False)],
)  # fmt: skip
def test_a_key_goes_only_to_a_program_that_takes_it(tmp_path: Path, line: str, takes: bool) -> None:
    assert VersionProbe(fake_program(tmp_path, line)).takes_lead_key() is takes


def test_a_missing_program_gets_no_key(tmp_path: Path) -> None:
    assert VersionProbe([str(tmp_path / "nowhere")]).takes_lead_key() is False


def test_the_key_is_on_the_command_line_as_claude_code_passes_it(tmp_path: Path) -> None:
    key = Keyring().new_lead_key(TEAM, "alice")
    req = SpawnRequest(name="alice", team=TEAM, color="blue", cwd=tmp_path, parent_session_id="s", model="m",
                       permission_mode="bypassPermissions", lead_key=key)  # fmt: skip
    argv = teammate_argv(req, ["claude"])
    assert argv[argv.index("--lead-verify-key") + 1] == key.argument()
    assert argv.index("--lead-verify-key") == argv.index("--parent-session-id") + 2  # where Claude Code puts it
    assert LeadVerifyKey.parse(key.argument()) == key


def test_the_prompt_is_signed_with_the_key_the_teammate_gets_and_a_failed_spawn_drops_it(
    tmp_path: Path, layout: Layout
) -> None:
    session = Session(SessionOptions(cwd=tmp_path), FakeModel([]), layout=layout)
    TeamStore(layout).create(TEAM, cwd=str(tmp_path))
    spawner = KeptSpawner()
    spawn_member(session, spawner, TEAM, {"name": "alice", "prompt": "You are alice."})
    [req] = spawner.requests
    assert req.lead_key is not None
    [prompt] = Mailbox(layout).read_live(TEAM, "alice")
    assert LEAD_SIG in prompt.extra and verifies(LEAD_DOMAIN, prompt, req.lead_key.key)
    task = session.store.tasks.create(TEAM, "Write parser")
    session.store.tasks.update(TEAM, task.id, owner="alice")  # the store sends alice a task_assignment
    [_, assignment] = Mailbox(layout).read_live(TEAM, "alice")
    assert "task_assignment" in assignment.text and verifies(LEAD_DOMAIN, assignment, req.lead_key.key)
    with pytest.raises(ToolInputError, match="Could not start bob"):
        spawn_member(session, FailingSpawner(), TEAM, {"name": "bob", "prompt": "You are bob."})
    probe = Mailbox(layout, seal=session.store.keyring.seal)
    TeamStore(layout).add_member(TEAM, NewMember(name="bob"))
    sent = probe.send(TEAM, "bob", "after the failed start", sender=LEAD_NAME)
    assert LEAD_SIG not in sent.extra  # bob's key went with the failed spawn
