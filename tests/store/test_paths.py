"""Name rules shared with Claude Code, and the guarantee that no name leaves the config root."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentteams.errors import InvalidNameError
from agentteams.store import paths
from agentteams.store.paths import Layout, agent_name, path_part, team_dir_name, unique_name


def test_config_root_follows_env(config_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert paths.config_root() == config_root
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    monkeypatch.setenv("HOME", "/home/someone")
    assert paths.config_root() == Path("/home/someone/.claude")


@pytest.mark.parametrize(
    ("raw", "team", "part"),
    [
        ("My Team!", "my-team-", "My-Team-"),
        ("session-59a7c56e", "session-59a7c56e", "session-59a7c56e"),
        ("a_b.c", "a-b-c", "a_b-c"),
        ("../../etc", "------etc", "------etc"),
        ("équipe", "-quipe", "-quipe"),
    ],
)
def test_sanitising_rules(raw: str, team: str, part: str) -> None:
    assert team_dir_name(raw) == team
    assert path_part(raw) == part


def test_agent_names_lose_the_id_separator() -> None:
    assert agent_name("alice@team") == "alice-team"
    assert agent_name(" bob ") == "bob"


@pytest.mark.parametrize("bad", ["", "   ", "///", "@@", "x" * 129])
def test_meaningless_or_huge_names_are_refused(bad: str) -> None:
    with pytest.raises(InvalidNameError):
        team_dir_name(bad)
    with pytest.raises(InvalidNameError):
        agent_name(bad)


def test_unique_names_are_case_insensitive() -> None:
    assert unique_name("alice", ["team-lead"]) == "alice"
    assert unique_name("Alice", ["alice"]) == "Alice-2"
    assert unique_name("alice", ["alice", "ALICE-2", "alice-3"]) == "alice-4"


@pytest.mark.parametrize("name", ["../x", "/etc/passwd", "a/../../b", "..", "x\x00y", "a\nb"])
def test_every_built_path_stays_inside_the_root(layout: Layout, name: str) -> None:
    root = layout.root.resolve()
    builders = (
        layout.team_dir, layout.config_file, lambda n: layout.inbox_file("t", n),
        lambda n: layout.inbox_file(n, "alice"), layout.task_dir, lambda n: layout.history_file("t", n),
    )  # fmt: skip
    for build in builders:
        try:
            path = build(name)
        except InvalidNameError as e:
            assert "name" in str(e)
            continue
        assert path.resolve().is_relative_to(root)
        assert path.resolve() != root


def test_task_ids_must_be_numbers(layout: Layout) -> None:
    assert layout.task_file("t", "007").name == "7.json"
    for bad in ("../1", "1.json", "-1", "", "one"):
        with pytest.raises(InvalidNameError):
            layout.task_file("t", bad)
