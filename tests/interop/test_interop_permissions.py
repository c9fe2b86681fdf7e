"""Interop tier, permission rules: the real `claude -p` and our `agentteams -p` in the same scratch repository with
the same settings files (user, project, local) and the same scripted tool calls allow and deny the same calls.

Each row's outcome is observed (the call's effect on disk, or the secret in a Read's result, and the tool_result the
server got): the real CLI must match the table (the table documents Claude Code, verified) and ours the real CLI.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.cli import Cli
from tests.support.permworld import (
    SECRET,
    Arrangement,
    Case,
    Observed,
    Outcome,
    any_of,
    created,
    ids,
    launcher,
    read_it,
    removed,
    run_batch,
)  # fmt: skip

pytestmark = pytest.mark.timeout(240)

W = "{W}"  # the world's absolute path, filled in when the world is built
R = f"{W}/repo"

Effect = Callable[[Path, str], bool]


Expect = Outcome | dict[str, Outcome]


def bash(row: str, command: str, ran: Effect, expect: Expect, ours: Outcome | None = None) -> Case:
    return Case(row, "Bash", {"command": command, "description": "permission table"}, ran, expect, ours)


def write(row: str, path: str, expect: Expect, ours: Outcome | None = None) -> Case:
    return Case(row, "Write", {"file_path": f"{W}/{path}", "content": "written\n"}, created(path), expect, ours)


def read(row: str, path: str, expect: Outcome) -> Case:
    return Case(row, "Read", {"file_path": f"{W}/{path}"}, read_it, expect)


PROJECT = Arrangement(
    "project rules",
    project={
        "permissions": {
            "allow": [
                "Bash(git:*)",
                "Bash(npm run test)",
                "Bash(mkdir wild-*)",
                "Bash(touch star *)",
                "Bash(rm:*)",
                "Edit(src/**)",
                "Edit(.claude/**)",
                "Bash(tail:*)",
                "Bash(touch ask-*)",
            ],
            "deny": ["Bash(rm keep.txt)", "Read(./secrets/**)", "Edit(src/locked/**)"],
            "ask": ["Bash(touch ask-*)"],
        }
    },
    cases=(
        bash("Bash(git:*) prefix", "git init -q g1", created("repo/g1/.git"), "allow"),
        bash(
            "Bash(git:*) compound `git … && touch`", "git init -q g2 && touch c1", any_of("repo/g2", "repo/c1"), "deny"
        ),
        bash("Bash(npm run test) exact", "npm run test", created("repo/npm-test"), "allow"),
        bash("Bash(npm run test) exact: other script", "npm run other", created("repo/npm-other"), "deny"),
        bash("Bash(mkdir wild-*) wildcard", "mkdir wild-1", created("repo/wild-1"), "allow"),
        bash("Bash(touch star *) word wildcard", "touch star s1", created("repo/s1"), "allow"),
        bash("Bash(touch star *): no word boundary", "touch starx", created("repo/starx"), "deny"),
        bash("Bash(rm:*) prefix", "rm junk.txt", removed("repo/junk.txt"), "allow"),
        bash("deny Bash(rm keep.txt) over allow Bash(rm:*)", "rm keep.txt", removed("repo/keep.txt"), "deny"),
        bash("Bash(rm:*) on a path outside the project", "rm ../outside/r.txt", removed("outside/r.txt"), "deny"),
        bash("Bash(tail:*) on a path outside the project", "tail -1 ../outside/r.txt", read_it, "deny"),
        bash("Bash(rm:*) in .git (protected)", "rm .git/description", removed("repo/.git/description"), "deny"),
        bash("ask Bash(touch ask-*) over allow (-p: not run)", "touch ask-1", created("repo/ask-1"), "deny"),
        bash("no rule: a command that writes", "touch none-1", created("repo/none-1"), "deny"),
        write("Edit(src/**) covers Write", "repo/src/new.py", "allow"),
        write("deny Edit(src/locked/**) over allow Edit(src/**)", "repo/src/locked/x.py", "deny"),
        write("no rule: Write", "repo/top.py", "deny"),
        write("Edit(.claude/**) cannot open .claude (protected)", "repo/.claude/x.json", "deny"),
        read("deny Read(./secrets/**)", "repo/secrets/key.txt", "deny"),
        read("no rule: Read in the project", "repo/notes.txt", "allow"),
        bash("no rule: a read-only command (cat) in the project", "cat notes.txt", read_it, "allow"),
        bash("no rule: read-only `git status && cat`", "git status && head -1 notes.txt", read_it, "allow"),
        bash("no rule: a read-only command outside the project", "cat ../outside/r.txt", read_it, "deny"),
        bash("no rule: `grep -r` outside the project", f"grep -r {SECRET} ../outside", read_it, "deny"),
        bash(
            "no rule: `sort`, `2>/dev/null`, `echo $HOME` read only",
            "echo $HOME && sort notes.txt 2>/dev/null",
            read_it,
            "allow",
        ),
        bash("deny Read(./secrets/**) and `cat` of it", "cat secrets/key.txt", read_it, "deny"),
        bash("no rule: `echo > file` (a redirect writes)", "echo hi > redirected", created("repo/redirected"), "deny"),
    ),
)

WHOLE_AND_PATHS = Arrangement(
    "whole tools, path forms",
    user={"permissions": {"allow": ["Bash"]}},
    project={
        "permissions": {
            "allow": ["Edit", "Edit(docs/**)"],
            "deny": ["Read(~/private/**)", f"Read(/{W}/outside/deny/**)", "Edit(/docs/**)"],
        }
    },
    cases=(
        bash("Bash (whole tool, user settings)", "touch b-any", created("repo/b-any"), "allow"),
        bash("Bash (whole tool): a path outside", "touch ../outside/b-out", created("outside/b-out"), "allow"),
        bash(
            "Bash (whole tool): touch in .claude (protected)", "touch .claude/b-t", created("repo/.claude/b-t"), "deny"
        ),
        write("Edit (whole tool) does not cover Write", "repo/w.txt", "deny"),
        write("deny Edit(/docs/**): / is the settings' project", "repo/docs/a.md", "deny"),
        read("deny Read(~/private/**)", "home/private/k.txt", "deny"),
        read("no rule: Read outside the project", "home/public.txt", "deny"),
        read("deny Read(//abs/**)", "outside/deny/s.txt", "deny"),
    ),
)

PRECEDENCE = Arrangement(
    "user, project, local",
    user={
        "permissions": {
            "allow": ["Bash(touch u1)", "Bash(touch x1)"],
            "deny": ["Bash(touch y1)"],
            "defaultMode": "default",
        }
    },
    project={
        "permissions": {
            "allow": ["Bash(touch y1)", "Bash(touch p1)"],
            "deny": ["Bash(touch x1)", "Bash(touch z1)"],
            "defaultMode": "default",
        }
    },
    local={"permissions": {"allow": ["Bash(touch z1)"], "deny": ["Bash(touch p1)"], "defaultMode": "acceptEdits"}},
    cases=(
        bash("user allow", "touch u1", created("repo/u1"), "allow"),
        bash("project deny over user allow", "touch x1", created("repo/x1"), "deny"),
        bash("user deny over project allow", "touch y1", created("repo/y1"), "deny"),
        bash("project deny over local allow", "touch z1", created("repo/z1"), "deny"),
        bash("local deny over project allow", "touch p1", created("repo/p1"), "deny"),
        write("local defaultMode acceptEdits over project default", "repo/c.txt", "allow"),
    ),
)

FLAGS = Arrangement(
    "command-line flags",
    project={"permissions": {"defaultMode": "default", "allow": ["Bash(touch fl-3)"], "deny": ["Bash(touch fl-2)"]}},
    flags=(
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        "Bash(touch fl-1) Bash(touch fl-2)",
        "--disallowedTools",
        "Bash(touch fl-3)",
    ),
    cases=(
        bash("--allowedTools", "touch fl-1", created("repo/fl-1"), "allow"),
        bash("settings deny over --allowedTools", "touch fl-2", created("repo/fl-2"), "deny"),
        bash("--disallowedTools over settings allow", "touch fl-3", created("repo/fl-3"), "deny"),
        write("--permission-mode acceptEdits over defaultMode default", "repo/fl.txt", "allow"),
    ),
)

MODE_OVER_USER = Arrangement(
    "defaultMode: project over user",
    user={"permissions": {"defaultMode": "acceptEdits"}},
    project={"permissions": {"defaultMode": "default"}},
    cases=(write("project defaultMode default over user acceptEdits", "repo/m.txt", "deny"),),
)

ACCEPT_EDITS = Arrangement(
    "acceptEdits, additionalDirectories",
    project={"permissions": {"defaultMode": "acceptEdits", "additionalDirectories": [f"{W}/extra"]}},
    cases=(
        write("acceptEdits: Write in the project", "repo/a.txt", "allow"),
        write("acceptEdits: Write in an additional directory", "extra/e.txt", "allow"),
        write("acceptEdits: Write outside", "outside/o.txt", "deny"),
        bash(
            "acceptEdits: touch, mv in the project",
            "touch d-touch && mv keep.txt moved.txt",
            created("repo/moved.txt"),
            "allow",
        ),
        bash("acceptEdits: touch outside", "touch ../outside/t", created("outside/t"), "deny"),
        bash("acceptEdits: mkdir in .git (protected)", "mkdir .git/m", created("repo/.git/m"), "deny"),
        write("acceptEdits: Write in .vscode (protected)", "repo/.vscode/s.json", "deny"),
        write("acceptEdits: Write in .github (not protected)", "repo/.github/ci.yml", "allow"),
        bash("acceptEdits: another command (git)", "git init -q d-git", created("repo/d-git"), "deny"),
        read("Read in an additional directory", "extra/r.txt", "allow"),
        read("Read outside", "outside/r.txt", "deny"),
    ),
)

# 2.1.197 lets a repository's own settings switch every check off; 2.1.330 and 2.1.332 take bypassPermissions from
# the user's settings only. We follow them: a cloned repository must not be able to do that (a documented difference)
REPO_BYPASS: dict[str, Outcome] = {"2.1.197": "allow", "2.1.330": "deny", "2.1.332": "deny"}

BYPASS = Arrangement(
    "bypassPermissions",
    user={"permissions": {"defaultMode": "bypassPermissions", "deny": ["Bash(touch e-deny)"]}},
    cases=(
        bash("bypassPermissions (user): a command", "touch e-ok", created("repo/e-ok"), "allow"),
        bash("bypassPermissions (user): deny still wins", "touch e-deny", created("repo/e-deny"), "deny"),
        write("bypassPermissions (user): Write outside", "outside/b.txt", "allow"),
        write("bypassPermissions (user): Write in .claude", "repo/.claude/b.json", "allow"),
    ),
)

REPO_BYPASS_ARR = Arrangement(
    "bypassPermissions in the repository",
    project={"permissions": {"defaultMode": "bypassPermissions"}},
    local={"permissions": {"defaultMode": "bypassPermissions"}},
    cases=(
        bash("bypassPermissions (project, local): a command", "touch r-ok", created("repo/r-ok"), REPO_BYPASS, "deny"),
        write("bypassPermissions (project, local): Write outside", "outside/b.txt", REPO_BYPASS, "deny"),
    ),
)

DONT_ASK = Arrangement(
    "dontAsk",
    project={"permissions": {"defaultMode": "dontAsk", "allow": ["Bash(touch f-ok)"]}},
    cases=(
        bash("dontAsk: allowed command", "touch f-ok", created("repo/f-ok"), "allow"),
        bash("dontAsk: other command", "touch f-no", created("repo/f-no"), "deny"),
        read("dontAsk: Read in the project", "repo/notes.txt", "allow"),
        bash("dontAsk: a read-only command (cat)", "cat notes.txt", read_it, "allow"),
        write("dontAsk: Write", "repo/f.txt", "deny"),
    ),
)

ARRANGEMENTS = (
    PROJECT,
    WHOLE_AND_PATHS,
    PRECEDENCE,
    MODE_OVER_USER,
    FLAGS,
    ACCEPT_EDITS,
    BYPASS,
    REPO_BYPASS_ARR,
    DONT_ASK,
)


def table(arr: Arrangement, version: str, real: list[Observed], ours: list[Observed]) -> str:
    lines = [f"[{arr.name}, Claude Code {version}]"]
    for case, r, o in zip(arr.cases, real, ours, strict=True):
        lines.append(f"  {case.row:<58} expect {case.expected(version):<6} real {r.outcome!s:<6} ours {o.outcome}")
    return "\n".join(lines)


@pytest.mark.parametrize("arr", ARRANGEMENTS, ids=ids(ARRANGEMENTS))
def test_both_clis_allow_and_deny_the_same_calls(
    claude: Path, claude_version: str, cli: Cli, arr: Arrangement, tmp_path: Path
) -> None:
    world = tmp_path / "world"
    real = run_batch(world, arr, claude_version, [str(claude)], launcher(120))
    ours = run_batch(world, arr, claude_version, cli.argv(), launcher(120))
    shown = table(arr, claude_version, real, ours)
    print("\n" + shown)
    assert [o.outcome for o in real] == [c.expected(claude_version) for c in arr.cases], shown
    # ours as the real CLI, except where a row documents that we differ on purpose
    assert [o.outcome for o in ours] == [c.ours or r.outcome for c, r in zip(arr.cases, real, strict=True)], shown
