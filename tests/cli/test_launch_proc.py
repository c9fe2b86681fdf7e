"""`agentteams launch team.toml PROMPT -p` end to end (issue 17, item 5): real lead processes, the real SDK client and
the scripted server, offline. The demo's scenario declared as a team file (three roles, five seed tasks) runs to the
end with the lead's model never creating the team, a task or a teammate; `team export` of that running team,
launched again and exported again, gives the same team file and the same member entries."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from agentteams.model.aliases import resolve_model
from agentteams.run.demo import script as demo_script
from agentteams.store.paths import LEAD_NAME
from agentteams.team.teamfile.schema import parse
from tests.support.cli import Cli
from tests.support.launch_scenario import GATE, TEAM_FILE, scenario
from tests.support.procs import processes_with_env
from tests.support.team_run import lead_env
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

PROMPT = "Extend calc.py with multiply() and divide(), with tests."
MEANINGFUL = ("name", "agentType", "model", "prompt", "planModeRequired", "mode", "agentteamsBudgetTokens")


def members(cli: Cli, team: str) -> list[dict[str, Any]]:
    proc = cli("team", "show", team, "--json")
    return list(json.loads(proc.stdout)["members"]) if proc.returncode == 0 else []


def launch_and_export(cli: Cli, config_root: Path, work: Path, team_file: Path) -> tuple[str, list[dict[str, Any]]]:
    """Launch `team_file` in `work`, export the team once all three roles run, let the scenario finish; the export
    and the member entries as they were then."""
    for name, body in demo_script.files().items():
        (work / name).write_text(body, encoding="utf-8")
    with MockServer(scenario()) as server:
        env = lead_env(config_root, server)
        lead = cli.popen("launch", str(team_file), PROMPT, "-p", "--dangerously-skip-permissions",
                         "--teammate-mode", "in-process", env=env, cwd=work, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)  # fmt: skip
        wait_until(lambda: len(members(cli, "calc")) == 4 or lead.poll() is not None, 60, "the three roles to join")
        assert lead.poll() is None, lead.communicate()
        entries = members(cli, "calc")
        exported = cli("team", "export", "calc")
        assert exported.returncode == 0, exported.stderr
        (work / GATE).touch()  # the lead's first turn goes on
        out, err = lead.communicate(timeout=120)
        assert lead.returncode == 0, err
        assert "DEMO COMPLETE" in out, (out, err)
        lead_requests = [r["body"] for r in server.requests if r["route"] == "lead"]
    first = json.dumps(lead_requests[0]["messages"][0])
    assert "Keep the team on the task list" in first and PROMPT in first, "instructions, then the prompt"
    called = {b["name"] for m in lead_requests[-1]["messages"] if isinstance(m["content"], list)
              for b in m["content"] if b.get("type") == "tool_use"}  # fmt: skip
    assert "SendMessage" in called and not called & {"TeamCreate", "TaskCreate", "Task"}, called
    return exported.stdout, entries


def test_a_team_file_runs_the_demo_scenario_and_its_export_relaunches_the_same(
    cli: Cli, config_root: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    original = tmp_path / "team.toml"
    original.write_text(TEAM_FILE, encoding="utf-8")
    export1, entries1 = launch_and_export(cli, config_root, work, original)
    calc = (work / "calc.py").read_text()
    assert "def multiply" in calc and "def divide" in calc
    assert "test_divide_by_zero" in (work / "test_calc.py").read_text()
    assert "multiply(a, b)" in (work / "README.md").read_text(), "alice's task #4 ran"
    assert not (config_root / "teams" / "calc").exists(), "the team was deleted at the end"
    by_name = {m["name"]: m for m in entries1}
    assert set(by_name) == {LEAD_NAME, "alice", "bob", "carol"}
    assert by_name["alice"]["model"] == resolve_model("haiku")
    assert by_name["carol"]["planModeRequired"] is True
    assert by_name["bob"]["agentteamsBudgetTokens"] == 500000

    # what the export says is what the file said (the model by its id, task ids as the task list has them)
    spec, again = parse(TEAM_FILE), parse(export1)
    assert again.name == "calc" and again.description == spec.description
    assert again.instructions == spec.instructions
    for was, now in zip(spec.roles, again.roles, strict=True):
        assert (now.name, now.prompt, now.mode, now.max_budget_tokens) == (
            was.name, was.prompt, was.mode, was.max_budget_tokens)  # fmt: skip
        assert now.model == (resolve_model(was.model) if was.model else entries1[0]["model"])
    ids = {t.id: str(i) for i, t in enumerate(spec.tasks, start=1)}
    assert [(t.id, t.subject, t.owner, t.blocked_by) for t in again.tasks] == [
        (ids[t.id], t.subject, t.owner, tuple(ids[d] for d in t.blocked_by)) for t in spec.tasks
    ]

    # the round trip: the export launched again runs the same scenario and exports the same file
    for leftover in ("calc.py", "test_calc.py", "README.md", GATE):
        (work / leftover).unlink(missing_ok=True)
    exported = tmp_path / "exported.toml"
    exported.write_text(export1, encoding="utf-8")
    export2, entries2 = launch_and_export(cli, config_root, work, exported)
    assert export2 == export1
    assert [{k: m.get(k) for k in MEANINGFUL} for m in entries2] == [{k: m.get(k) for k in MEANINGFUL}
                                                                     for m in entries1]  # fmt: skip


def test_a_malformed_file_is_refused_with_its_line_before_anything_starts(
    cli: Cli, config_root: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "team.toml"
    bad.write_text(TEAM_FILE.replace('blocked_by = ["tests"]', 'blocked_by = ["tests", "deploy"]'), encoding="utf-8")
    proc = cli("launch", str(bad), "go", "-p", "--teammate-mode", "in-process", cwd=tmp_path)
    assert proc.returncode == 1
    line = TEAM_FILE.splitlines().index('blocked_by = ["tests"]') + 1
    assert proc.stderr == f"agentteams: error: {bad}:{line}: task 'run' is blocked by unknown task 'deploy'\n"
    assert not (config_root / "teams").exists() or not any((config_root / "teams").iterdir()), "no team was made"
    bad.write_text("[team\nname = 'x'\n", encoding="utf-8")
    proc = cli("launch", str(bad), cwd=tmp_path)
    assert proc.returncode == 1 and proc.stderr.startswith(f"agentteams: error: {bad}:1: invalid TOML: "), proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    good = tmp_path / "good.toml"
    good.write_text(TEAM_FILE, encoding="utf-8")
    proc = cli("launch", str(good), "--check", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == f"{good}: team calc: 3 role(s), 5 task(s)\n", proc.stderr
    missing = cli("launch", str(tmp_path / "none.toml"), cwd=tmp_path)
    assert missing.returncode == 1 and "No such file or directory" in missing.stderr, missing.stderr


def test_an_unknown_agent_type_is_refused_before_the_team_is_made(cli: Cli, config_root: Path, tmp_path: Path) -> None:
    typed = tmp_path / "team.toml"
    typed.write_text('[team]\nname = "calc"\n[[role]]\nname = "rev"\nagent_type = "reviewer"\n', encoding="utf-8")
    with MockServer(scenario()) as server:
        proc = cli("launch", str(typed), "go", "-p", "--teammate-mode", "in-process", env=lead_env(config_root, server),
                   cwd=tmp_path)  # fmt: skip
        assert server.requests == [], "no model request: nothing started"
    assert proc.returncode == 1
    assert proc.stderr == "agentteams: error: role 'rev': unknown agent_type 'reviewer'\n"
    assert not (config_root / "teams" / "calc").exists()


def test_a_team_file_with_tmux_teammates_runs_to_the_end_and_leaves_nothing(
    cli: Cli, config_root: Path, tmp_path: Path, tmux: Tmux
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for name, body in demo_script.files().items():
        (work / name).write_text(body, encoding="utf-8")
    (work / GATE).touch()  # nothing to export here: the lead goes straight on
    team_file = tmp_path / "team.toml"
    team_file.write_text(TEAM_FILE, encoding="utf-8")
    with MockServer(scenario()) as server:
        pane = tmux.start(lead_env(config_root, server), work, options={"remain-on-exit": "on"})
        launch = cli.line("launch", str(team_file), PROMPT, "-p", "--dangerously-skip-permissions",
                          "--teammate-mode", "tmux")  # fmt: skip
        tmux.respawn(pane, f"{launch} > {tmp_path}/out.txt 2> {tmp_path}/err.txt; echo $? > {tmp_path}/rc.txt")
        rc = tmp_path / "rc.txt"
        wait_until(lambda: len(tmux.panes()) == 4 or rc.exists(), 60, "three teammate panes beside the lead")
        assert len(tmux.panes()) == 4, (tmp_path / "err.txt").read_text()
        wait_until(lambda: rc.exists() and rc.read_text().strip() != "", 120, "the lead to exit")
    err = (tmp_path / "err.txt").read_text()
    assert rc.read_text().strip() == "0", err
    assert "DEMO COMPLETE" in (tmp_path / "out.txt").read_text(), err
    assert "test_divide_by_zero" in (work / "test_calc.py").read_text()
    assert not (config_root / "teams" / "calc").exists()
    assert len(tmux.panes()) == 1, "teammate panes are left behind"
    exclude = frozenset({tmux.server_pid()})
    wait_until(lambda: processes_with_env("CLAUDE_CONFIG_DIR", str(config_root), exclude=exclude) == [], 10,
               "no teammate process left")  # fmt: skip


def test_an_interactive_launch_gives_the_model_the_instructions_first_and_ctrl_d_takes_the_team_down(
    cli: Cli, config_root: Path, tmp_path: Path, tmux: Tmux
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for name, body in demo_script.files().items():
        (work / name).write_text(body, encoding="utf-8")
    (work / GATE).touch()
    team_file = tmp_path / "team.toml"
    team_file.write_text(TEAM_FILE, encoding="utf-8")
    with MockServer(scenario()) as server:
        pane = tmux.start(lead_env(config_root, server), work)
        launch = cli.line("launch", str(team_file), "--dangerously-skip-permissions", "--teammate-mode", "in-process")
        tmux.respawn(pane, launch)
        wait_until(lambda: "DEMO COMPLETE" in tmux.capture(pane, scrollback=True), 120, "the scenario to finish",
                   explain=lambda: scenario_state(tmux.capture(pane, scrollback=True), server))  # fmt: skip
        first = json.dumps(next(r["body"] for r in server.requests if r["route"] == "lead")["messages"][0])
        assert 'You lead team \\"calc\\"' in first and "Keep the team on the task list" in first, first
        exclude = frozenset({tmux.server_pid()})  # before Ctrl-D: the lead, quick to leave, may take the server along
        tmux.send(pane, "C-d")
        wait_until(lambda: processes_with_env("CLAUDE_CONFIG_DIR", str(config_root), exclude=exclude) == [], 30,
                   "the lead to leave")  # fmt: skip
    assert not (config_root / "teams" / "calc").exists()


def scenario_state(screen: str, server: MockServer) -> str:
    """What a stuck scenario shows: the pane, and each request's route, turn and newest user text."""
    rows = [f"{r.get('route')} turn {r.get('turn')}: {json.dumps(r['body']['messages'][-1])[:300]}"
            for r in server.requests]  # fmt: skip
    return f"pane:\n{screen[-3000:]}\nrequests ({len(rows)}):\n" + "\n".join(rows[-40:])


def test_a_role_that_cannot_start_takes_the_half_made_team_down(cli: Cli, config_root: Path, tmp_path: Path) -> None:
    team_file = tmp_path / "team.toml"
    team_file.write_text(TEAM_FILE, encoding="utf-8")
    empty = tmp_path / "bin"
    empty.mkdir()
    with MockServer(scenario()) as server:
        env = {**lead_env(config_root, server), "PATH": str(empty)}  # no tmux: the first tmux pane cannot start
        proc = cli("launch", str(team_file), PROMPT, "-p", "--dangerously-skip-permissions", "--teammate-mode", "tmux",
                   env=env, cwd=tmp_path)  # fmt: skip
        # (its roles bypass permissions: the lead must too, see test_launch_bypass.py)
        assert [r for r in server.requests if r["route"] == "lead"] == [], "the lead's model was never asked"
    assert proc.returncode == 1
    assert proc.stderr.startswith("agentteams: error: could not start role 'alice': "), proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    assert not any((config_root / "teams").iterdir()), "the team is taken down"
    assert not any((config_root / "tasks").iterdir()), "its task list too"
    wait_until(lambda: processes_with_env("CLAUDE_CONFIG_DIR", str(config_root)) == [], 10, "no process left")
