"""The permission parity corpus (tests/support/bash_corpus.py) through our policy alone, in the fast tier: every row
decided as Claude Code 2.1.332 decided it (headless, an ask is a refusal), but for the rows where ours is stricter on
purpose. The interop tier checks the same rows against the real CLI, with their effects on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentteams.agent.permissions.policy import PermissionPolicy, parse_rules
from agentteams.agent.permissions.settings_rules import settings_rules
from agentteams.agent.session import RESTRICTED_AWAY
from agentteams.run.precedence import Asked, Configured, choose
from agentteams.settings.load import load_settings
from agentteams.settings.types import SCOPES
from tests.support import realclaude as rc
from tests.support.bash_corpus import ARRANGEMENTS, STRICTER
from tests.support.permworld import Arrangement, Case, build

KINDS = {"Bash": "execute", "Write": "edit", "Edit": "edit", "Read": "read"}
ROWS = [(arr, case) for arr in ARRANGEMENTS for case in arr.cases]


def _flag(arr: Arrangement, name: str) -> str | None:
    return arr.flags[arr.flags.index(name) + 1] if name in arr.flags else None


def policy_for(arr: Arrangement, world: Path) -> PermissionPolicy:
    """What `agentteams -p` builds from the arrangement's settings files and flags (run/agent.py's order)."""
    restricted = "--restricted" in arr.flags
    repo = world / "repo"
    settings = load_settings(repo, root=world / "config", managed=None,
                             scopes=("flag", "managed") if restricted else SCOPES)  # fmt: skip
    chosen = choose(Asked(permission_mode=_flag(arr, "--permission-mode")),
                    Configured(permission_mode=settings.permissions.default_mode), {})  # fmt: skip
    allowed = [*settings_rules(settings, "allow"), *parse_rules(_flag(arr, "--allowedTools") or [], "--allowedTools")]
    return PermissionPolicy(
        mode=chosen.permission_mode,  # type: ignore[arg-type]
        allowed=allowed, disallowed=settings_rules(settings, "deny"), asked=settings_rules(settings, "ask"),
        cwd=repo, interactive=False, confined=restricted,
    )  # fmt: skip


def decided(arr: Arrangement, case: Case, world: Path) -> str:
    if "--restricted" in arr.flags and case.tool in RESTRICTED_AWAY:
        return "deny"  # not offered: a call to it is refused as an unknown tool
    target = str(case.args.get("command") or case.args.get("file_path")).replace("{W}", str(world))
    return policy_for(arr, world).decide(case.tool, KINDS[case.tool], target).behavior


@pytest.fixture(scope="module")
def worlds() -> dict[str, Path]:
    """One world per arrangement, built on first use: deciding reads it and changes nothing."""
    return {}


@pytest.mark.parametrize(("arr", "case"), ROWS, ids=[f"{a.name}: {c.row}"[:90] for a, c in ROWS])
def test_each_row_is_decided_as_claude_code_decides_it(
    arr: Arrangement, case: Case, worlds: dict[str, Path], tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    if arr.name not in worlds:
        worlds[arr.name] = tmp_path_factory.mktemp("world") / "world"
        build(worlds[arr.name], arr, rc.NEWEST)
    world = worlds[arr.name]
    monkeypatch.setenv("HOME", str(world / "home"))
    expected = case.expected(rc.NEWEST)
    ours = decided(arr, case, world)
    if (arr.name, case.row) in STRICTER:
        assert (expected, ours) == ("allow", "deny"), STRICTER[(arr.name, case.row)]
    else:
        assert ours == expected
