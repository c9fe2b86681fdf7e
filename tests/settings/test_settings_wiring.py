"""Settings reach the agent: rules into the policy (deny over ask over allow), defaultMode, working directories,
a settings deny hiding a tool, and a teammate's command line inheriting them (never `env`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentteams.agent.permissions.policy import PermissionPolicy, parse_rules
from agentteams.agent.session import Session, SessionOptions
from agentteams.settings.load import typed
from agentteams.settings.types import Settings, Source
from agentteams.store.paths import Layout
from agentteams.team.spawn.base import SpawnRequest, teammate_argv
from tests.support.fake_model import FakeModel, text

PROJECT = Source("project", "/p/.claude/settings.json")


def settings(**perms: list[str] | str) -> Settings:
    merged = {"permissions": perms, "env": {"SECRET_TOKEN": "hunter2-value"}, "model": "opus"}
    origins = {f"permissions.{k}[{i}]": PROJECT for k, v in perms.items() if isinstance(v, list) for i in range(len(v))}
    return typed(merged, origins)


def session(tmp_path: Path, layout: Layout, s: Settings, **kw: object) -> Session:
    options = SessionOptions(cwd=tmp_path, settings=s, **kw)  # type: ignore[arg-type]
    return Session(options, FakeModel([[text("ok")]]), layout=layout)


# (allow, ask, deny) rules, command -> what an interactive default-mode session decides
ORDER = [
    (["Bash(git:*)"], [], [], "allow"),
    (["Bash(git:*)"], ["Bash(git push:*)"], [], "ask"),
    (["Bash(git:*)"], ["Bash(git push:*)"], ["Bash(git push:*)"], "deny"),
    (["Bash(git:*)"], [], ["Bash(git:*)"], "deny"),
    ([], ["Bash"], [], "ask"),
]


@pytest.mark.parametrize(("allow", "ask", "deny", "expected"), ORDER)
def test_deny_over_ask_over_allow(
    tmp_path: Path, layout: Layout, allow: list[str], ask: list[str], deny: list[str], expected: str
) -> None:
    s = session(tmp_path, layout, settings(allow=allow, ask=ask, deny=deny), interactive=True)
    decision = s.policy.decide("Bash", "execute", "git push origin main")
    assert decision.behavior == expected, decision.reason
    if expected != "ask":
        assert "/p/.claude/settings.json" in decision.reason  # says which file's rule decided


def test_an_ask_rule_asks_even_in_bypass_mode_and_headless_it_denies(tmp_path: Path, layout: Layout) -> None:
    s = settings(ask=["Bash(rm:*)"])
    lead = session(tmp_path, layout, s, interactive=True, permission_mode="bypassPermissions")
    assert lead.policy.decide("Bash", "execute", "rm -rf build").behavior == "ask"
    headless = session(tmp_path, layout, s, interactive=False, permission_mode="bypassPermissions")
    decision = headless.policy.decide("Bash", "execute", "sudo rm -rf build")  # seen through `sudo` as a deny is
    assert decision.behavior == "deny" and "Bash(rm:*)" in decision.reason
    assert not headless.policy.allows_by_rule("Bash", "execute", "rm x")


def test_flag_rules_add_to_the_settings_rules(tmp_path: Path, layout: Layout) -> None:
    s = session(tmp_path, layout, settings(deny=["Bash(rm:*)"]), disallowed_tools=["Bash(curl:*)"],
                allowed_tools=["Bash(ls:*)"], permission_mode="bypassPermissions")  # fmt: skip
    assert s.policy.decide("Bash", "execute", "rm x").behavior == "deny"
    decision = s.policy.decide("Bash", "execute", "curl x")
    assert decision.behavior == "deny" and "--disallowedTools" in decision.reason


def test_a_bare_settings_deny_hides_the_tool(tmp_path: Path, layout: Layout) -> None:
    s = session(tmp_path, layout, settings(deny=["WebFetch", "Write"]))
    assert s.tool("Write") is None and s.tool("Edit") is not None


def test_an_unreadable_rule_is_skipped_not_fatal(tmp_path: Path, layout: Layout) -> None:
    s = session(tmp_path, layout, settings(deny=["Bash(rm:*", "Write"]))
    assert [str(r) for r in s.policy.disallowed] == ["Write"]


def test_accept_edits_only_inside_the_working_directories(tmp_path: Path) -> None:
    extra = tmp_path / "lib"
    extra.mkdir()
    policy = PermissionPolicy(mode="acceptEdits", cwd=tmp_path / "proj", additional_dirs=[extra], interactive=True)
    assert policy.decide("Edit", "edit", "src/a.py").behavior == "allow"
    assert policy.decide("Edit", "edit", str(extra / "b.py")).behavior == "allow"
    assert policy.decide("Edit", "edit", str(tmp_path / "libx" / "c.py")).behavior == "ask"  # a prefix is not inside
    assert policy.decide("Edit", "edit", "/etc/hosts").behavior == "ask"
    rules = PermissionPolicy(mode="acceptEdits", cwd=tmp_path, allowed=parse_rules("Edit(/etc/**)"), interactive=False)
    assert rules.decide("Edit", "edit", "/etc/hosts").behavior == "allow"  # a rule still can


def test_additional_directories_come_from_settings(tmp_path: Path, layout: Layout) -> None:
    s = session(tmp_path, layout, settings(additionalDirectories=["/srv/shared"]), permission_mode="acceptEdits")
    assert s.policy.additional_dirs == [Path("/srv/shared")]
    assert s.policy.decide("Write", "edit", "/srv/shared/x").behavior == "allow"


def test_a_teammate_gets_the_lead_settings_but_not_env_on_its_command_line(tmp_path: Path) -> None:
    s = settings(allow=["Edit"], defaultMode="acceptEdits")
    req = SpawnRequest(name="alice", team="t", color="blue", cwd=tmp_path, parent_session_id="s", model="m",
                       settings=s)  # fmt: skip
    argv = teammate_argv(req, ["agentteams"])
    [given] = [a for a in argv if a.startswith("--settings=")]
    assert json.loads(given.removeprefix("--settings=")) == {
        "permissions": {"allow": ["Edit"], "defaultMode": "acceptEdits"}, "model": "opus"}  # fmt: skip
    assert not any("hunter2" in a or "SECRET_TOKEN" in a for a in argv)
    # the lead's own mode is said outright, so the inherited defaultMode cannot override it
    assert argv[argv.index("--permission-mode") + 1] == "default"
    bare = teammate_argv(SpawnRequest(name="bob", team="t", color="red", cwd=tmp_path, parent_session_id="s",
                                      model="m"), ["agentteams"])  # fmt: skip
    assert not any(a.startswith("--settings") or a == "--permission-mode" for a in bare)


def test_spawned_teammates_get_the_lead_settings(tmp_path: Path, layout: Layout) -> None:
    from agentteams.store.file.teams import TeamStore
    from agentteams.team.spawn.member import spawn_member
    from agentteams.team.spawn.spawners import InProcessSpawner
    from tests.support.spawn_fakes import KeptSpawner

    s = settings(deny=["Bash(rm:*)"], ask=["Bash(git push:*)"])
    lead = session(tmp_path, layout, s)
    TeamStore(layout).create("t", cwd=str(tmp_path))
    kept = KeptSpawner()
    spawn_member(lead, kept, "t", {"name": "alice", "prompt": "You are alice."})
    [req] = kept.requests
    assert req.settings is s  # a tmux teammate gets it as --settings (see above)
    teammate = Session(InProcessSpawner.options_for(req), FakeModel([]), layout=layout)  # an in-process one
    assert teammate.policy.decide("Bash", "execute", "rm -rf x").behavior == "deny"
    assert teammate.policy.decide("Bash", "execute", "git push").behavior == "ask"
