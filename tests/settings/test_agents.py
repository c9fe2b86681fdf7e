"""Custom agents: the loader (project over user, parents up to the repository root, tool lists, bad files), the
`Task` tool's types, `describe_agents`, and a session run as a custom type or starting one as a subagent: its
prompt, tools (refused at execution, not only hidden) and model."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest

from agentteams.agent.prompts import Identity
from agentteams.agent.session import Session, SessionOptions
from agentteams.model.aliases import resolve_model
from agentteams.settings.agents import AgentCatalog, describe_agents, load_agents, tool_names
from agentteams.store.paths import Layout
from agentteams.tools.subagent import TaskTool
from tests.support.fake_model import FakeModel, text, tool


def agent_file(folder: Path, stem: str, front: str, body: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.md"
    path.write_text(f"---\n{front}\n---\n{body or f'PROMPT-OF-{stem}'}\n")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    d = tmp_path / "repo"
    d.mkdir()
    subprocess.run(["git", "init", "-q", str(d)], check=True)
    return d


def test_project_wins_over_user_and_both_are_listed(repo: Path, config_root: Path) -> None:
    agent_file(config_root / "agents", "reviewer", "name: reviewer\ndescription: user one\nmodel: opus")
    agent_file(config_root / "agents", "helper", "name: helper\ndescription: only the user has it")
    project = agent_file(repo / ".claude" / "agents", "rev", "name: reviewer\ndescription: project one\ntools: Read")
    found = load_agents(repo, config_root)
    assert found.problems == ()
    assert found.names() == ["general-purpose", "Explore", "Plan", "helper", "reviewer"]
    reviewer = found.agents["reviewer"]
    assert (reviewer.source, reviewer.path, reviewer.description) == ("project", project, "project one")
    assert reviewer.prompt == "PROMPT-OF-rev" and reviewer.tools == ("Read",) and reviewer.model is None
    assert found.agents["helper"].source == "user" and found.agents["helper"].tools is None


def test_parents_up_to_the_repository_root_nearest_first_and_subfolders(repo: Path, config_root: Path) -> None:
    sub = repo / "pkg" / "inner"
    sub.mkdir(parents=True)
    agent_file(repo.parent / ".claude" / "agents", "outside", "name: outside\ndescription: above the repository")
    agent_file(repo / ".claude" / "agents" / "review", "a", "name: shared\ndescription: root's\nmodel: haiku")
    agent_file(repo / "pkg" / ".claude" / "agents", "b", "name: shared\ndescription: nearer\nmodel: opus")
    found = load_agents(sub, config_root)
    assert set(found.agents) == {"shared"}  # nothing above the repository root
    assert found.agents["shared"].description == "nearer" and found.agents["shared"].model == "opus"
    assert load_agents(repo, config_root).agents["shared"].model == "haiku"  # from a subfolder of agents/


def test_outside_a_repository_only_the_cwd_counts(tmp_path: Path, config_root: Path) -> None:
    agent_file(tmp_path / ".claude" / "agents", "up", "name: up\ndescription: a parent's")
    here = tmp_path / "work"
    agent_file(here / ".claude" / "agents", "me", "name: me\ndescription: mine")
    assert set(load_agents(here, config_root).agents) == {"me"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Read, Grep,Glob", ("Read", "Grep", "Glob")),
        (["Read", "Bash(git:*)", "Bash(ls:*)"], ("Read", "Bash")),
        ("Agent(reviewer), Read", ("Task", "Read")),
        ("*", None),
        ("", ()),
        ([], ()),
    ],
)
def test_tool_lists(value: object, expected: tuple[str, ...] | None) -> None:
    assert tool_names(value, "tools") == expected


def test_front_matter_fields(repo: Path, config_root: Path) -> None:
    front = (
        "name: tester\ndescription: >\n  Runs the tests\n  and reports.\ntools:\n  - Read\n  - Bash\n"
        "disallowedTools: Write, Edit\nmodel: claude-haiku-4-5\ncolor: cyan\nmaxTurns: 3\nunknownKey: ignored"
    )
    agent_file(repo / ".claude" / "agents", "tester", front, body="You test.\n\nAlways.")
    found = load_agents(repo, config_root)
    assert found.problems == ()
    t = found.agents["tester"]
    assert (t.description, t.tools, t.disallowed_tools) == ("Runs the tests and reports.", ("Read", "Bash"),
                                                            ("Write", "Edit"))  # fmt: skip
    assert (t.model, t.color, t.max_turns, t.prompt) == ("claude-haiku-4-5", "cyan", 3, "You test.\n\nAlways.")
    assert t.allows("Read") and not t.allows("Write") and not t.allows("Grep")
    assert t.model_for("claude-opus-4-8") == "claude-haiku-4-5"
    absent = agent_file(repo / ".claude" / "agents", "plain", "name: plain\ndescription: d\nmodel: inherit")
    again = load_agents(repo, config_root).agents["plain"]
    assert again.path == absent and again.model_for("claude-opus-4-8") == "claude-opus-4-8"


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("---\nname: x\ndescription: never closed\n", ":1: the front matter block opened by '---' is never closed"),
        ("---\ndescription: no name\n---\nbody\n", "the front matter needs a name"),
        ("---\nname: nodesc\n---\nbody\n", "the front matter needs a description"),
        ("no front matter at all\n", "the front matter needs a name"),
        ("---\nname: y\ndescription: d\ntools: [Read\n---\nbody\n", "the front matter is not valid YAML"),
        ("---\nname: z\ndescription: d\ntools: {a: 1}\n---\nb\n", "tools must be a comma-separated string or a list"),
        ("---\nname: w\ndescription: d\nmaxTurns: -1\n---\nb\n", "maxTurns must be a positive whole number"),
        ("---\nname: Explore\ndescription: mine\n---\nb\n", "'Explore' is a built-in agent type"),
    ],
)
def test_a_bad_file_is_one_line_naming_it_and_the_others_load(
    repo: Path, config_root: Path, content: str, says: str
) -> None:
    folder = repo / ".claude" / "agents"
    agent_file(folder, "good", "name: good\ndescription: fine")
    bad = folder / "bad.md"
    bad.write_text(content)
    found = load_agents(repo, config_root)
    assert list(found.agents) == ["good"]
    [line] = found.problems
    assert str(bad) in line and says in line and line.endswith("the file is skipped") and "\n" not in line


def test_an_unreadable_file_is_one_line(repo: Path, config_root: Path) -> None:
    bad = repo / ".claude" / "agents" / "binary.md"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"---\nname: \xff\xfe\n---\n")
    [line] = load_agents(repo, config_root).problems
    assert str(bad) in line and "skipped" in line


def test_describe_agents(repo: Path, config_root: Path) -> None:
    path = agent_file(repo / ".claude" / "agents", "reviewer", "name: reviewer\ndescription: d\ntools: Read, Grep\n"
                      "disallowedTools: Bash\nmodel: haiku")  # fmt: skip
    agent_file(config_root / "agents", "any", "name: any\ndescription: d")
    lines = describe_agents(load_agents(repo, config_root))
    assert lines[0] == "general-purpose · built-in · tools: all tools · model: inherit"
    assert lines[1] == "Explore · built-in · tools: Read, Glob, Grep, Bash · model: inherit"
    assert lines[3] == f"any · user ({config_root / 'agents' / 'any.md'}) · tools: all tools · model: inherit"
    assert lines[4] == f"reviewer · project ({path}) · tools: Read, Grep except Bash · model: haiku"


def test_the_task_tool_offers_the_custom_types(repo: Path, config_root: Path) -> None:
    agent_file(repo / ".claude" / "agents", "reviewer", "name: reviewer\ndescription: Reviews diffs for bugs.")
    spec = TaskTool(load_agents(repo, config_root)).spec()
    assert spec.input_schema["properties"]["subagent_type"]["enum"] == ["general-purpose", "Explore", "Plan",
                                                                       "reviewer", "fork"]  # fmt: skip
    assert "- reviewer: Reviews diffs for bugs." in spec.description
    plain = TaskTool(AgentCatalog()).spec()
    assert plain.input_schema["properties"]["subagent_type"]["enum"] == ["general-purpose", "Explore", "Plan", "fork"]
    assert TaskTool.input_schema["properties"]["subagent_type"]["enum"] == ["general-purpose", "Explore", "Plan"]


REVIEWER = "name: reviewer\ndescription: Reviews.\ntools: Read, Grep\nmodel: haiku"


def test_a_subagent_of_a_custom_type_runs_on_its_prompt_tools_and_model(
    repo: Path, config_root: Path, layout: Layout
) -> None:
    agent_file(repo / ".claude" / "agents", "reviewer", REVIEWER, body="REVIEWER-PROMPT: look for bugs.")
    victim = repo / "victim.txt"
    model = FakeModel([
        [tool("Task", description="review", prompt="review it", subagent_type="reviewer")],
        [tool("Bash", command=f"touch {victim}")],  # the subagent, outside its list
        [text("REVIEW-DONE")],
        [text("lead done")],
    ])  # fmt: skip
    s = Session(SessionOptions(cwd=repo, permission_mode="bypassPermissions"), model, layout=layout)
    assert s.run("go").text == "lead done"
    sub = model.requests[1]
    assert sub.system.startswith("REVIEWER-PROMPT: look for bugs.") and "You are agentteams" not in sub.system
    assert [t.name for t in sub.tools] == ["Read", "Grep"] and sub.model == resolve_model("haiku")
    refusal = model.user_text(2)
    assert "Bash was not run: agent type 'reviewer'" in refusal and "may use Read, Grep" in refusal
    assert not victim.exists()
    assert model.requests[0].model == resolve_model("default")  # the lead's own model is untouched


def test_a_teammate_of_a_custom_type_is_held_to_its_list(
    repo: Path, config_root: Path, layout: Layout, caplog: pytest.LogCaptureFixture
) -> None:
    agent_file(repo / ".claude" / "agents", "reviewer", REVIEWER, body="REVIEWER-PROMPT")
    victim = repo / "victim.txt"
    model = FakeModel([[tool("Write", file_path=str(victim), content="x")], [text("ok")]])
    me = Identity("rita", "team", agent_type="reviewer")
    options = SessionOptions(cwd=repo, permission_mode="bypassPermissions", team_role="teammate", identity=me)
    s = Session(options, model, layout=layout)
    s.run("work")
    request = model.requests[0]
    assert request.system.startswith("REVIEWER-PROMPT") and "Your name is rita (role: reviewer)" in request.system
    names = [t.name for t in request.tools]
    assert names == ["Read", "Grep", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList", "SendMessage"]
    assert "Write was not run: agent type 'reviewer'" in model.user_text(1) and not victim.exists()
    with caplog.at_level(logging.WARNING, logger="agentteams"):
        other = Session(SessionOptions(cwd=repo, team_role="teammate", identity=Identity("x", "team",
                        agent_type="nosuch")), FakeModel([]), layout=layout)  # fmt: skip
    assert "agent type 'nosuch' is not defined" in caplog.text and len(other.tools) > 10


def test_the_lead_reports_a_bad_file_once(
    repo: Path, config_root: Path, layout: Layout, caplog: pytest.LogCaptureFixture
) -> None:
    bad = repo / ".claude" / "agents" / "bad.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("---\nname: bad\n---\n")
    with caplog.at_level(logging.WARNING, logger="agentteams"):
        Session(SessionOptions(cwd=repo), FakeModel([]), layout=layout)
    assert [r.getMessage() for r in caplog.records] == [
        f"custom agent {bad}: the front matter needs a description; the file is skipped"
    ]


def test_a_teammate_process_takes_the_types_model_unless_the_lead_names_one(repo: Path, config_root: Path) -> None:
    from agentteams.run.teammate import TeammateFlags, _take_agent_type

    agent_file(repo / ".claude" / "agents", "reviewer", REVIEWER)
    for given, expected in ((False, resolve_model("haiku")), (True, "claude-opus-5-5")):
        options = SessionOptions(cwd=repo, model="claude-opus-5-5")
        flags = TeammateFlags("r@t", "r", "t", "blue", "s", "reviewer", False, model_given=given)
        _take_agent_type(options, flags, config_root)
        assert options.model == expected and options.agents is not None and "reviewer" in options.agents.agents


def test_a_built_in_type_is_held_to_its_list_too(repo: Path, layout: Layout) -> None:
    victim = repo / "victim.txt"
    model = FakeModel([
        [tool("Task", description="look", prompt="look around", subagent_type="Explore")],
        [tool("Write", file_path=str(victim), content="x")],
        [text("explored")],
        [text("lead done")],
    ])  # fmt: skip
    Session(SessionOptions(cwd=repo, permission_mode="bypassPermissions"), model, layout=layout).run("go")
    assert [t.name for t in model.requests[1].tools] == ["Bash", "Read", "Glob", "Grep"]
    assert "Write was not run: the Explore subagent type may use only Read, Glob, Grep, Bash" in model.user_text(2)
    assert not victim.exists()


def test_a_teammate_of_a_built_in_type_is_held_to_its_list(repo: Path, layout: Layout) -> None:
    """Claude Code drops a built-in type's list on the teammate path (anthropics/claude-code#81852, a confirmed
    bug); ours holds it there too, on our own prompt."""
    victim = repo / "victim.txt"
    model = FakeModel([[tool("Write", file_path=str(victim), content="x")], [text("ok")]])
    options = SessionOptions(cwd=repo, permission_mode="bypassPermissions", team_role="teammate",
                             identity=Identity("eve", "team", agent_type="Explore"))  # fmt: skip
    Session(options, model, layout=layout).run("work")
    assert "You are agentteams" in model.requests[0].system
    names = [t.name for t in model.requests[0].tools]
    assert names == ["Bash", "Read", "Glob", "Grep", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList", "SendMessage"]
    assert "Write was not run: agent type 'Explore' may use Read, Glob, Grep, Bash" in model.user_text(1)
    assert not victim.exists()
