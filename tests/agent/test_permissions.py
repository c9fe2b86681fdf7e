"""Permission decisions: every mode × tool kind, rule parsing and matching, session allow-always."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentteams.agent.permissions.bash_rules import command_prefix
from agentteams.agent.permissions.policy import (
    PermissionPolicy,
    PermissionRuleError,
    Rule,
    offered_tools,
    parse_mode,
    parse_rules,
)
from agentteams.tools.runtime_hooks import PERMISSION_MODES, PermissionMode

KINDS = ("read", "edit", "execute", "coordinate", "plan")
TABLE: dict[str, tuple[str, ...]] = {  # read, edit, execute, coordinate, plan
    "default": ("allow", "ask", "ask", "allow", "allow"),
    "acceptEdits": ("allow", "allow", "ask", "allow", "allow"),
    "bypassPermissions": ("allow", "allow", "allow", "allow", "allow"),
    "plan": ("allow", "deny", "deny", "allow", "allow"),
    "dontAsk": ("allow", "deny", "deny", "allow", "allow"),
    "delegate": ("deny", "deny", "deny", "allow", "deny"),
}
TARGETS = {"read": "a.py", "edit": "a.py", "execute": "make -j2", "coordinate": None, "plan": None}
TOOLS = {"read": "Read", "edit": "Edit", "execute": "Bash", "coordinate": "TaskList", "plan": "ExitPlanMode"}


def policy(
    mode: PermissionMode = "default", *, allowed: str = "", disallowed: str = "", **kw: object
) -> PermissionPolicy:
    return PermissionPolicy(
        mode=mode, allowed=parse_rules(allowed), disallowed=parse_rules(disallowed),
        cwd=Path(str(kw.pop("cwd", "/work/proj"))), **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def test_the_table_covers_every_mode() -> None:
    assert set(TABLE) == set(PERMISSION_MODES)


@pytest.mark.parametrize("mode", PERMISSION_MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_every_mode_and_kind(mode: PermissionMode, kind: str) -> None:
    expected = TABLE[mode][KINDS.index(kind)]
    decision = policy(mode).decide(TOOLS[kind], kind, TARGETS[kind])
    assert decision.behavior == expected, decision.reason
    assert decision.reason
    headless = policy(mode, interactive=False).decide(TOOLS[kind], kind, TARGETS[kind])
    assert headless.behavior == ("deny" if expected == "ask" else expected)


def test_reasons_say_why() -> None:
    plan = policy("plan").decide("Write", "edit", "x.py")
    assert "plan mode is read-only until the plan is approved" in plan.reason
    delegate = policy("delegate").decide("Bash", "execute", "ls")
    assert "only coordinates" in delegate.reason
    dont = policy("dontAsk").decide("Bash", "execute", "make test")
    assert "--allowedTools" in dont.reason
    assert policy("default").decide("Bash", "execute", "make").reason == "default mode asks before running commands"


def test_non_interactive_ask_becomes_deny_with_a_way_out() -> None:
    bash = policy(interactive=False).decide("Bash", "execute", "git status && npm test")
    assert bash.behavior == "deny"
    assert "non-interactive" in bash.reason
    assert '--allowedTools "Bash(git status:*) Bash(npm test:*)"' in bash.reason
    assert "--permission-mode" in bash.reason
    edit = policy(interactive=False).decide("Edit", "edit", "a.py")
    assert '--allowedTools "Edit"' in edit.reason and "--permission-mode acceptEdits" in edit.reason


# -- rule parsing -------------------------------------------------------------------------------------------


def test_rules_split_on_commas_and_spaces_but_not_inside_parentheses() -> None:
    rules = parse_rules("Bash(git:*),Edit  Read(~/**), Bash(npm run test)\tWrite,,")
    assert [str(r) for r in rules] == ["Bash(git:*)", "Edit", "Read(~/**)", "Bash(npm run test)", "Write"]
    assert rules[3] == Rule("Bash", "npm run test")
    assert parse_rules(["Edit", "Bash(ls -la), Glob"]) == [Rule("Edit"), Rule("Bash", "ls -la"), Rule("Glob")]
    assert parse_rules("Bash() Bash(*)") == [Rule("Bash"), Rule("Bash")]
    assert parse_rules("") == []


@pytest.mark.parametrize("bad", ["Bash(git:*", "Bash)git(", "Ba$h", "(x)"])
def test_bad_rules_are_refused_clearly(bad: str) -> None:
    with pytest.raises(PermissionRuleError):
        parse_rules(bad)


def test_parse_mode() -> None:
    assert parse_mode("acceptEdits") == "acceptEdits"
    with pytest.raises(PermissionRuleError, match="bypassPermissions"):
        parse_mode("yolo")


# -- commands -----------------------------------------------------------------------------------------------


def test_disallowed_rm_refuses_rm_but_runs_ls() -> None:
    p = policy("bypassPermissions", disallowed="Bash(rm:*)")
    for command in (
        "rm -rf x",
        "rm",
        "ls && rm x",
        "ls | rm -i y",
        "/bin/rm x",
        "sudo rm x",
        "FOO=1 rm x",
        "echo $(rm z)",
    ):
        decision = p.decide("Bash", "execute", command)
        assert decision.behavior == "deny", command
        assert "Bash(rm:*)" in decision.reason and "--disallowedTools" in decision.reason
    for command in ("ls", "ls -la", "rmdir x", "echo rm", "git rm --cached x"):
        assert p.decide("Bash", "execute", command).behavior == "allow", command


def test_prefix_exact_and_wildcard_command_rules() -> None:
    p = policy(allowed="Bash(git:*) Bash(npm run test) Bash(make * -j4)", interactive=False)
    assert p.decide("Bash", "execute", "git").behavior == "allow"
    assert p.decide("Bash", "execute", "git   status").behavior == "allow"
    assert p.decide("Bash", "execute", "gitk").behavior == "deny"
    assert p.decide("Bash", "execute", "npm run test").behavior == "allow"
    assert p.decide("Bash", "execute", "npm run test -- --watch").behavior == "deny"
    assert p.decide("Bash", "execute", "make all -j4").behavior == "allow"
    # an allow rule must cover every command in the line
    assert p.decide("Bash", "execute", "git status && rm -rf /").behavior == "deny"
    assert p.decide("Bash", "execute", "git log $(rm x)").behavior == "deny"
    assert p.decide("Bash", "execute", "git commit -m 'a; b'").behavior == "allow"


def test_a_deny_rule_reads_the_script_a_shell_is_given() -> None:
    p = policy("bypassPermissions", disallowed="Bash(rm:*)")
    assert p.decide("Bash", "execute", "bash -c 'ls; rm x'").behavior == "deny"


def test_command_prefix() -> None:
    assert command_prefix("git status -s") == "git status"
    assert command_prefix("rm -rf build") == "rm"
    assert command_prefix("pytest tests/") == "pytest"
    assert command_prefix("ls") == "ls"


# -- paths --------------------------------------------------------------------------------------------------


def test_home_glob(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    p = policy("dontAsk", allowed="Read(~/**)", cwd=tmp_path)
    assert p.decide("Read", "read", str(home / "a" / "b.txt")).behavior == "allow"
    assert p.decide("Read", "read", "~/notes.md").behavior == "allow"
    deny = policy("bypassPermissions", disallowed="Read(~/**)", cwd=tmp_path)
    assert deny.decide("Read", "read", str(home / ".ssh" / "id_rsa")).behavior == "deny"
    assert deny.decide("Read", "read", str(tmp_path / "elsewhere.txt")).behavior == "allow"


def test_relative_globs_are_relative_to_the_cwd(tmp_path: Path) -> None:
    p = policy(allowed="Edit(src/**) Write(*.md)", cwd=tmp_path, interactive=False)
    assert p.decide("Edit", "edit", "src/pkg/mod.py").behavior == "allow"
    assert p.decide("Edit", "edit", str(tmp_path / "src" / "a.py")).behavior == "allow"
    assert p.decide("Edit", "edit", "src/../setup.py").behavior == "deny"
    assert p.decide("Edit", "edit", "tests/a.py").behavior == "deny"
    assert p.decide("Write", "edit", "README.md").behavior == "allow"
    assert p.decide("Write", "edit", "docs/README.md").behavior == "deny"  # `*` stays in one directory
    assert p.decide("Read", "read", "src/x").behavior == "allow"  # the rule is for Edit only; reads are free


def test_a_symlink_cannot_smuggle_a_denied_path(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    (tmp_path / "link").symlink_to(secret)
    p = policy("bypassPermissions", disallowed="Read(secret/**)", cwd=tmp_path)
    assert p.decide("Read", "read", "link/key.pem").behavior == "deny"
    allow = policy("dontAsk", allowed="Edit(link/**)", cwd=tmp_path)
    assert allow.decide("Edit", "edit", "link/a.txt").behavior == "allow"  # the rule names the link itself


def test_a_pattern_rule_does_not_cover_a_call_without_a_target() -> None:
    p = policy(allowed="Bash(git:*)", interactive=False)
    assert p.decide("Bash", "execute", None).behavior == "deny"


# -- plan file, precedence ----------------------------------------------------------------------------------


def test_plan_mode_may_write_only_the_plan_file(tmp_path: Path) -> None:
    plan_file = tmp_path / "plans" / "plan.md"
    p = policy("plan", plan_file=plan_file, cwd=tmp_path)
    assert p.decide("Write", "edit", str(plan_file)).behavior == "allow"
    assert p.decide("Write", "edit", "plans/plan.md").behavior == "allow"
    refused = p.decide("Write", "edit", "main.py")
    assert refused.behavior == "deny" and str(plan_file) in refused.reason
    assert p.decide("Bash", "execute", "ls").behavior == "deny"
    assert p.decide("Read", "read", "main.py").behavior == "allow"


def test_plan_and_delegate_limits_outrank_allowed_rules() -> None:
    assert policy("plan", allowed="Write Bash").decide("Write", "edit", "x.py").behavior == "deny"
    assert policy("delegate", allowed="Bash").decide("Bash", "execute", "ls").behavior == "deny"
    assert policy("default", allowed="Write").decide("Write", "edit", "x.py").behavior == "allow"


def test_disallowed_beats_allowed_and_bypass() -> None:
    p = policy("bypassPermissions", allowed="Edit", disallowed="Edit")
    assert p.decide("Edit", "edit", "x.py").behavior == "deny"
    assert p.decide("Write", "edit", "x.py").behavior == "allow"


# -- session allow-always -----------------------------------------------------------------------------------


def test_remember_a_command_prefix() -> None:
    p = policy()
    p.remember("Bash", "git status -s")
    assert p.session_rules == [Rule("Bash", "git status:*")]
    allowed = p.decide("Bash", "execute", "git status")
    assert allowed.behavior == "allow" and "for this session" in allowed.reason
    assert p.decide("Bash", "execute", "git push").behavior == "ask"
    p.remember("Bash", "git status -s")
    assert len(p.session_rules) == 1


def test_remember_a_path_exactly(tmp_path: Path) -> None:
    p = policy(cwd=tmp_path)
    p.remember("Edit", "a[1].py")
    assert p.session_rules == [Rule("Edit", os.path.join(tmp_path, "a[1].py"), literal=True)]
    assert p.decide("Edit", "edit", str(tmp_path / "a[1].py")).behavior == "allow"
    assert p.decide("Edit", "edit", "a1.py").behavior == "ask"
    assert p.decide("Write", "edit", "a[1].py").behavior == "ask"  # same path, another tool


def test_remember_without_target_allows_the_tool() -> None:
    p = policy()
    p.remember("WebFetch", None)
    assert p.decide("WebFetch", "execute", None).behavior == "allow"


def test_remembered_rules_never_beat_a_deny() -> None:
    p = policy(disallowed="Bash(rm:*)")
    p.remember("Bash", "rm -rf build")
    assert p.decide("Bash", "execute", "rm -rf build").behavior == "deny"


# -- offered tools ------------------------------------------------------------------------------------------


@dataclass
class FakeTool:
    name: str
    kind: str


ALL = [FakeTool("Read", "read"), FakeTool("Bash", "execute"), FakeTool("TaskList", "coordinate"),
       FakeTool("SendMessage", "coordinate"), FakeTool("ExitPlanMode", "plan")]  # fmt: skip


def test_delegate_mode_offers_only_coordination_tools() -> None:
    assert [t.name for t in offered_tools(ALL, "delegate", [])] == ["TaskList", "SendMessage"]
    assert offered_tools(ALL, "default", []) == ALL


def test_a_bare_disallowed_name_hides_the_tool() -> None:
    offered = offered_tools(ALL, "default", parse_rules("Bash,SendMessage Read(~/**)"))
    assert [t.name for t in offered] == ["Read", "TaskList", "ExitPlanMode"]


def test_real_tools_fit_offered_tools() -> None:
    from agentteams.tools.plan import PLAN_TOOLS
    from agentteams.tools.team.task_tools import TASK_TOOLS
    from agentteams.tools.team.team_tools import TEAM_TOOLS

    tools = [cls() for cls in (*TASK_TOOLS, *TEAM_TOOLS, *PLAN_TOOLS)]
    names = [t.name for t in offered_tools(tools, "delegate", parse_rules("TeamDelete"))]
    assert names == ["TaskCreate", "TaskGet", "TaskUpdate", "TaskList", "TeamCreate", "SendMessage"]


def test_each_part_of_a_compound_command_may_be_allowed_by_a_different_rule(tmp_path: Path) -> None:
    policy = PermissionPolicy(
        mode="default", allowed=parse_rules("Bash(cat:*), Bash(echo:*)"), cwd=tmp_path, interactive=False
    )
    assert policy.decide("Bash", "execute", "cat a && echo done").behavior == "allow"
    assert policy.decide("Bash", "execute", "cat a && rm -rf b").behavior == "deny"
    assert policy.decide("Bash", "execute", "cat a | tee x").behavior == "deny"


def test_a_rule_naming_the_agent_tool_holds_for_the_subagent_tool(tmp_path: Path) -> None:
    policy = PermissionPolicy(mode="bypassPermissions", disallowed=parse_rules("Agent"), cwd=tmp_path)
    assert policy.decide("Task", "execute", None).behavior == "deny"  # claude's two names of one tool
    assert parse_rules("Agent(Explore)") == [Rule("Task", "Explore")]
