"""Permission decisions that the interop table (test_interop_permissions.py) found the real Claude Code makes,
pinned here in the fast tier: rule forms, reads outside the working directories, read-only and file commands,
and a repository's settings that ask for bypassPermissions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentteams.agent.permissions.path_commands import is_file_command, read_paths, written_paths
from agentteams.agent.permissions.policy import PermissionPolicy, parse_rule, parse_rules
from agentteams.agent.permissions.settings_rules import settings_rules
from agentteams.agent.permissions.shell_syntax import read_line
from agentteams.settings.load import load_settings


def headless(cwd: Path, mode: str = "default", **kw: object) -> PermissionPolicy:
    return PermissionPolicy(mode=mode, cwd=cwd, interactive=False, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("command", "behavior"),
    [("touch star", "allow"), ("touch star s1", "allow"), ("touch starx", "deny"), ("touch  star  s2", "allow")],
)
def test_a_space_before_the_star_is_a_word_boundary(tmp_path: Path, command: str, behavior: str) -> None:
    policy = headless(tmp_path, allowed=parse_rules(["Bash(touch star *)"]))
    assert policy.decide("Bash", "execute", command).behavior == behavior


def test_a_path_rule_for_edit_covers_write_but_the_bare_tool_does_not(tmp_path: Path) -> None:
    src = headless(tmp_path, allowed=[parse_rule("Edit(src/**)")])
    assert src.decide("Write", "edit", "src/new.py").behavior == "allow"
    assert src.decide("Write", "edit", "top.py").behavior == "deny"
    bare = headless(tmp_path, allowed=[parse_rule("Edit")])
    assert bare.decide("Write", "edit", "w.txt").behavior == "deny"
    assert bare.decide("Edit", "edit", "w.txt").behavior == "allow"
    locked = headless(tmp_path, mode="acceptEdits", disallowed=[parse_rule("Edit(src/locked/**)")])
    assert locked.decide("Write", "edit", "src/locked/x.py").behavior == "deny"
    secrets = headless(tmp_path, disallowed=[parse_rule("Read(./secrets/**)")])
    assert secrets.decide("Grep", "read", "secrets").behavior == "deny"


def test_path_forms_absolute_home_and_relative_to_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    repo, sub = tmp_path / "repo", tmp_path / "repo" / "sub"
    rules = [parse_rule(f"Read(/{tmp_path}/outside/**)"), parse_rule("Read(~/private/**)"),
             parse_rule("Edit(/docs/**)", root=repo)]  # fmt: skip
    policy = headless(sub, mode="bypassPermissions", disallowed=rules)  # a session started in a subdirectory
    assert policy.decide("Read", "read", str(tmp_path / "outside" / "s.txt")).behavior == "deny"
    assert policy.decide("Read", "read", str(tmp_path / "home" / "private" / "k")).behavior == "deny"
    assert policy.decide("Write", "edit", str(repo / "docs" / "a.md")).behavior == "deny"
    assert policy.decide("Write", "edit", str(sub / "docs" / "a.md")).behavior == "allow"


def test_settings_rules_know_their_project(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Edit(/docs/**)"]}}))
    [rule] = settings_rules(load_settings(tmp_path, root=tmp_path / "config", managed=None), "deny")
    assert rule.root == str(tmp_path)


def test_reading_outside_the_working_directories_needs_permission(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    policy = headless(tmp_path / "repo", additional_dirs=[extra])
    assert policy.decide("Read", "read", str(tmp_path / "repo" / "a")).behavior == "allow"
    assert policy.decide("Read", "read", str(extra / "r.txt")).behavior == "allow"
    assert policy.decide("Read", "read", str(tmp_path / "outside.txt")).behavior == "deny"
    asked = PermissionPolicy(cwd=tmp_path / "repo").decide("Read", "read", "/etc/hostname")
    assert asked.behavior == "ask"


def test_read_only_commands_run_unasked_inside_only(tmp_path: Path) -> None:
    policy = headless(tmp_path, disallowed=[parse_rule("Read(./secrets/**)")])
    for command in ("cat notes.txt", "git status && head -1 notes.txt", "grep -r x .", "ls", "cat a | wc -l",
                    "echo $HOME && sort a 2>/dev/null", "diff a b 2>&1", "grep -o x a"):  # fmt: skip
        assert policy.decide("Bash", "execute", command).behavior == "allow", command
    for command in ("cat ../out.txt", "cat secrets/key.txt", "echo hi > f", "cat $HOME/x", "git diff --output=f",
                    "git -c core.pager=sh log", "cat a | tee b", "ls `rm x`", "sort -ro out a",
                    "echo `rm x`", "cat a > /dev/nullx"):  # fmt: skip
        assert policy.decide("Bash", "execute", command).behavior == "deny", command


def test_accept_edits_runs_plain_file_commands_inside(tmp_path: Path) -> None:
    policy = headless(tmp_path, mode="acceptEdits")
    for command in ("touch a && mv a b", "mkdir -p d/e", "rm -f junk", "cp a b", "sed -i s/x/y/g notes.txt"):
        assert policy.decide("Bash", "execute", command).behavior == "allow", command
    for command in ("touch ../t", "rm -rf /", "git init g", "sed -i s/x/y/w/tmp/out f", "touch a > /tmp/x", "rm *"):
        assert policy.decide("Bash", "execute", command).behavior == "deny", command
    assert headless(tmp_path).decide("Bash", "execute", "touch a").behavior == "deny"  # default mode asks


def test_the_command_checks_name_their_paths() -> None:
    [copy] = read_line("cp -r a 'b c'", "/w").commands
    assert is_file_command(copy)
    assert [w.value for w in written_paths(copy) or []] == ["a", "b c"]
    [echo] = read_line("echo anything at all", "/w").commands
    assert read_paths(echo) == []  # echo's words are not paths
    [grep] = read_line("grep -r pattern src docs", "/w").commands
    assert [w.value for w in read_paths(grep) or []] == ["src", "docs"]


@pytest.mark.parametrize("scope_file", ["settings.json", "settings.local.json"])
def test_a_repository_cannot_turn_on_bypass(tmp_path: Path, scope_file: str) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / scope_file).write_text(json.dumps({"permissions": {"defaultMode": "bypassPermissions"}}))
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "acceptEdits"}}))
    found = load_settings(tmp_path, root=config, managed=None)
    assert found.permissions.default_mode == "acceptEdits"  # the user's own, not the repository's
    [problem] = found.problems
    assert "bypassPermissions" in problem and scope_file in problem
    (config / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "bypassPermissions"}}))
    (tmp_path / ".claude" / scope_file).unlink()
    assert load_settings(tmp_path, root=config, managed=None).permissions.default_mode == "bypassPermissions"


def test_protected_directories_are_never_written_unasked(tmp_path: Path) -> None:
    rules = parse_rules(["Edit(.claude/**)", "Bash(touch:*)", "Bash"])
    calls = [("Write", "edit", ".claude/settings.json"), ("Edit", "edit", "sub/.git/config"),
             ("Bash", "execute", "touch .vscode/x"), ("Bash", "execute", "rm -rf .husky")]  # fmt: skip
    for mode in ("default", "acceptEdits", "dontAsk"):
        policy = headless(tmp_path, mode=mode, allowed=rules)
        for tool, kind, target in calls:
            assert policy.decide(tool, kind, target).behavior == "deny", (mode, target)
    assert PermissionPolicy(cwd=tmp_path).decide("Write", "edit", ".idea/x").behavior == "ask"
    free = headless(tmp_path, mode="bypassPermissions")
    assert free.decide("Write", "edit", ".claude/settings.json").behavior == "allow"
    edits = headless(tmp_path, mode="acceptEdits")
    assert edits.decide("Write", "edit", ".github/ci.yml").behavior == "allow"
    assert edits.decide("Bash", "execute", "git init -q .vscode").behavior == "deny"  # no rule: only file commands
    assert headless(tmp_path, allowed=rules).decide("Bash", "execute", "git init -q .vscode").behavior == "allow"


def test_a_command_rule_does_not_reach_outside_but_the_bare_tool_does(tmp_path: Path) -> None:
    prefix = headless(tmp_path / "repo", allowed=parse_rules(["Bash(rm:*)", "Bash(cat:*)"]))
    assert prefix.decide("Bash", "execute", "rm junk.txt").behavior == "allow"
    for command in ("rm ../outside/r.txt", "cat /etc/hostname", "rm $HOME/x", "cat a && rm ../b"):
        assert prefix.decide("Bash", "execute", command).behavior == "deny", command
    bare = headless(tmp_path / "repo", allowed=parse_rules(["Bash"]))
    assert bare.decide("Bash", "execute", "rm ../outside/r.txt").behavior == "allow"
