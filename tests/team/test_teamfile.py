"""Team files (issue 17, item 5), in process: what a file declares, each refusal with its line and reason, the role as
the Task tool's spawn arguments, the key-to-line map, and `team export` of a config written back as a file launch
reads the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentteams.store.records import Member, Task, TeamConfig
from agentteams.team.teamfile.export import export_team
from agentteams.team.teamfile.schema import Role, TeamFileError, parse
from agentteams.team.teamfile.seeding import LAUNCH_KEY, TYPE_ONLY_PROMPT, spawn_args
from agentteams.team.teamfile.toml_positions import key_lines, line_of
from tests.support.launch_scenario import TEAM_FILE
from tests.support.repo import ROOT

GOOD = """\
[team]
name = "calc"
isolation = "worktree"

[lead]
instructions = '''
Split the work.
owner = "not a key: inside a string"
'''

[[role]]
name = "alice"
prompt = "Write code."
allowed_tools = [
  "Bash(git:*)",
  "Edit",
]

[[role]]
name = "bob"
agent_type = "Plan"
isolation = "none"

[[task]]
id = "a"
subject = "First"
owner = "alice"

[[task]]
id = "b"
subject = "Second"
blocked_by = ["a"]
"""


def refusal(text: str) -> str:
    with pytest.raises(TeamFileError) as e:
        parse(text, "team.toml")
    return str(e.value)


def test_a_good_file_is_read_whole() -> None:
    spec = parse(GOOD)
    assert (spec.name, spec.isolation) == ("calc", "worktree")
    assert spec.instructions == 'Split the work.\nowner = "not a key: inside a string"\n'
    assert [r.name for r in spec.roles] == ["alice", "bob"]
    assert spec.roles[0].allowed_tools == ("Bash(git:*)", "Edit")
    assert spec.roles[1].agent_type == "Plan" and spec.roles[1].isolation == "none"
    assert [(t.id, t.owner, t.blocked_by) for t in spec.tasks] == [("a", "alice", ()), ("b", None, ("a",))]
    assert len(parse(TEAM_FILE).tasks) == 5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[team]\nname = "x"\n[[role]]\nname = "a"\nprompt = \n', "team.toml:5: invalid TOML: Invalid value"),
        ('[team]\nname = "x"\n[[role]]\nname = "a"\nprompt = "p"\nmodle = "opus"\n',
         "team.toml:6: unknown key 'modle' in [[role]] #1"),
        ('[team]\nname = "x"\n\n[[role]]\nname = "a"\nprompt = "p"\nmax_budget_tokens = "lots"\n',
         "team.toml:7: [[role]] #1: 'max_budget_tokens' must be an integer, not a string"),
        ('[team]\nname = "x"\n[[role]]\nname = "a"\nprompt = "p"\nallowed_tools = "Edit"\n',
         "team.toml:6: [[role]] #1: 'allowed_tools' must be an array, not a string"),
        ('[team]\nname = "x"\n[[task]]\nsubject = "s"\n[[task]]\nsubject = "t"\nblocked_by = ["9"]\n',
         "team.toml:7: task '2' is blocked by unknown task '9'"),
        ('[team]\nname = "x"\n[[task]]\nid = "a"\nsubject = "s"\nblocked_by = ["c"]\n[[task]]\nid = "b"\n'
         'subject = "t"\nblocked_by = ["a"]\n[[task]]\nid = "c"\nsubject = "u"\nblocked_by = ["b"]\n',
         "team.toml:6: tasks block each other in a cycle: 'a' -> 'c' -> 'b' -> 'a'"),
        ('[team]\nname = "x"\n[[role]]\nname = "a"\nprompt = "p"\n[[role]]\nname = "A"\nprompt = "q"\n',
         "team.toml:7: duplicate role name 'A'"),
        ('[team]\nname = "x"\n[[task]]\nsubject = "s"\nowner = "zed"\n',
         "team.toml:5: task '1': owner 'zed' is no role of this file"),
        ('[team]\nname = "x"\n[[role]]\nname = "a"\nprompt = "p"\nmode = "yolo"\n', "team.toml:6: role 'a': mode must"),
        ('[team]\nname = "x"\n[[role]]\nname = "a"\n', "team.toml:3: role 'a' needs a prompt or an agent_type"),
        ('[team]\nname = "x"\n[[role]]\nname = "team-lead"\nprompt = "p"\n', "team.toml:4: [[role]] #1 name"),
        ('[lead]\ninstructions = "x"\n', "team.toml:1: missing [team] table"),
        ('[team]\nname = "x"\n[teem]\n', "team.toml:3: unknown key 'teem' in the file"),
        ('[team]\nname = "x"\nisolation = "container"\n', "team.toml:3: [team] isolation must be one of"),
        ('[team]\nname = "x"\n[[role]]\nname = "a"\nprompt = "p"\nmodel = "gpt-9"\n',
         "team.toml:6: role 'a': unknown model 'gpt-9'"),
    ],
    ids=["syntax", "unknown-key", "wrong-type", "not-an-array", "unknown-dependency", "cycle", "duplicate-role",
         "unknown-owner", "bad-mode", "no-prompt", "lead-name", "no-team", "unknown-table", "bad-isolation",
         "unknown-model"],
)  # fmt: skip
def test_a_malformed_file_names_the_line_and_the_reason(text: str, expected: str) -> None:
    assert refusal(text).startswith(expected), refusal(text)


def test_the_readmes_example_is_a_good_team_file() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### A team file", 1)[1]
    example = section.split("```toml\n", 1)[1].split("```", 1)[0]
    spec = parse(example, "README.md")
    assert [r.name for r in spec.roles] == ["alice", "carol"] and [t.id for t in spec.tasks] == ["multiply", "tests"]


def test_a_task_blocked_by_itself_is_a_cycle() -> None:
    message = refusal('[team]\nname = "x"\n[[task]]\nid = "a"\nsubject = "s"\nblocked_by = ["a"]\n')
    assert message == "team.toml:6: tasks block each other in a cycle: 'a' -> 'a'"


def test_the_line_map_skips_strings_and_arrays_and_counts_array_tables() -> None:
    lines = key_lines(GOOD)
    assert lines[("team", "isolation")] == 3
    assert ("lead", "owner") not in lines, "a key-like line inside a multi-line string is text"
    assert lines[("role", 0)] == 11 and lines[("role", 1, "agent_type")] == 21
    assert lines[("task", 1, "blocked_by")] == 32
    assert line_of(lines, ("role", 0, "allowed_tools", 1)) == 14, "a nested value falls back to its key"
    assert line_of(lines, ("nowhere",)) == 1


def test_the_line_map_reads_quoted_and_dotted_keys_inline_tables_and_strings_that_look_like_toml() -> None:
    text = (
        'a = "x # not a comment [still] = y"\n"quoted key" = 1\nb.c = 2\nt = { x = 1, y = [1, 2] }\n'
        '[ s . "u v" ]   # a header with spaces\nd = \'\'\'has """ inside\ne = 3\'\'\'\nf = "esc \\" q = 4"\n'
        "[[arr]]\ng = 5\n[[arr]]\ng = 6\n"
    )
    assert key_lines(text) == {
        ("a",): 1, ("quoted key",): 2, ("b", "c"): 3, ("t",): 4, ("s", "u v"): 5, ("s", "u v", "d"): 6,
        ("s", "u v", "f"): 8, ("arr", 0): 9, ("arr", 0, "g"): 10, ("arr", 1): 11, ("arr", 1, "g"): 12,
    }  # fmt: skip


def test_export_of_a_team_its_model_made_has_no_instructions() -> None:
    lead = member("team-lead", cwd="/w")
    config = TeamConfig(name="adhoc", created_at=1, lead_agent_id=lead.agent_id, members=[lead])
    text = export_team(config, [])
    assert "[lead]" not in text and "[[role]]" not in text and "[[task]]" not in text
    assert parse(text).name == "adhoc"


def test_a_role_becomes_the_task_tools_spawn_arguments(tmp_path: Path) -> None:
    role = Role(name="alice", prompt="Go.", agent_type="reviewer", model="opus", mode="acceptEdits",
                allowed_tools=("Edit",), disallowed_tools=("Bash(rm:*)",), cwd="../other", max_budget_tokens=9,
                max_budget_usd=1.5)  # fmt: skip
    args = spawn_args(role, "calc", tmp_path / "repo", default_isolation="worktree")
    assert args == {
        "name": "alice", "team_name": "calc", "description": "role alice", "prompt": "Go.",
        "subagent_type": "reviewer", "model": "opus", "mode": "acceptEdits", "allowed_tools": ["Edit"],
        "disallowed_tools": ["Bash(rm:*)"], "cwd": str(tmp_path / "other"), "isolation": "worktree",
        "max_budget_tokens": 9, "max_budget_usd": 1.5,
    }  # fmt: skip
    bare = spawn_args(Role(name="bob", agent_type="Plan", isolation="none"), "calc", tmp_path, "worktree")
    assert bare == {"name": "bob", "team_name": "calc", "description": "role bob", "prompt": TYPE_ONLY_PROMPT,
                    "subagent_type": "Plan", "isolation": "none"}  # fmt: skip
    assert "isolation" not in spawn_args(Role(name="c", prompt="p"), "calc", tmp_path)


def member(name: str, **fields: object) -> Member:
    return Member(agent_id=f"{name}@calc", name=name, joined_at=1, **fields)  # type: ignore[arg-type]


def test_export_writes_what_launch_reads_back() -> None:
    lead = member("team-lead", cwd="/w/repo", model="claude-opus-4-1")
    alice = member("alice", prompt="Write code.", model="claude-haiku-4-5", mode="acceptEdits", cwd="/w/other",
                   allowed_tools=["Edit"], disallowed_tools=["Bash(rm:*)"], budget_usd=2)  # fmt: skip
    tree = "/w/repo/.claude/worktrees/calc/bob"
    bob = member("bob", agent_type="Plan", prompt=TYPE_ONLY_PROMPT, mode="default", plan_mode_required=True,
                 cwd=tree, worktree_path=tree)  # fmt: skip
    config = TeamConfig(name="calc", created_at=1, lead_agent_id=lead.agent_id, members=[lead, alice, bob],
                        description="d", extra={LAUNCH_KEY: {"instructions": "Lead well.\nTwo lines."}})  # fmt: skip
    tasks = [
        Task(id="1", subject="One", blocks=["2"], blocked_by=[], owner="alice@calc", status="completed"),
        Task(id="2", subject="Two", description="more", blocks=[], blocked_by=["1", "3"], owner="gone"),
        Task(id="3", subject="Gone", blocks=[], blocked_by=[], status="deleted"),
    ]
    text = export_team(config, tasks)
    assert text.startswith("# agentteams team export calc")
    spec = parse(text)
    assert (spec.name, spec.description, spec.instructions, spec.lead_model) == (
        "calc", "d", "Lead well.\nTwo lines.", "claude-opus-4-1")  # fmt: skip
    a, b = spec.roles
    assert (a.prompt, a.model, a.mode, a.cwd, a.allowed_tools, a.disallowed_tools, a.max_budget_usd) == (
        "Write code.", "claude-haiku-4-5", "acceptEdits", "../other", ("Edit",), ("Bash(rm:*)",), 2.0)  # fmt: skip
    assert (b.agent_type, b.prompt, b.mode, b.isolation, b.cwd) == ("Plan", "", "plan", "worktree", None)
    assert [(t.id, t.owner, t.blocked_by) for t in spec.tasks] == [("1", "alice", ()), ("2", None, ("1",))]
    assert export_team(config, tasks) == text, "the same team, the same file"
