"""Shell completions: completions/ matches the command tree, and each script loads and completes in its real shell.

A shell that is not installed still gets a check: its file is non-empty and names every top-level command.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from agentteams.store.paths import Layout
from tests.support.builders import team_with_members
from tests.support.procs import child_env
from tests.support.repo import ROOT

COMPLETIONS = ROOT / "completions"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_completions", ROOT / "scripts" / "gen_completions.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def top_level_commands() -> list[str]:
    tree = generator().load_tree([])
    return [child.path[0] for child in tree.children]


def run(argv: list[str], config_root: Path) -> str:
    proc = subprocess.run(argv, env=child_env(config_root), capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, f"{argv[0]} failed ({proc.returncode}): {proc.stderr}"
    return proc.stdout


@pytest.fixture
def teams(layout: Layout) -> list[str]:
    team_with_members(layout, "alpha")
    team_with_members(layout, "beta")
    return ["alpha", "beta"]


def assert_names_every_command(file: Path) -> None:
    text = file.read_text()
    assert text.strip(), f"{file} is empty"
    missing = [c for c in top_level_commands() if c not in text]
    assert not missing, f"{file.name} does not complete {missing}"


def test_completions_are_up_to_date() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_completions.py"), "--check"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, f"stale completions; run python scripts/gen_completions.py\n{proc.stderr}"


BASH_PROBE = """
source {file}
complete -p agentteams
t() {{ COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _agentteams; echo "${{COMPREPLY[*]}}"; }}
t agentteams te
t agentteams team ''
t agentteams team show ''
t agentteams cleanup --d
t agentteams --team-name ''
"""


def test_bash_registers_and_completes(config_root: Path, teams: list[str]) -> None:
    out = run(["bash", "-c", BASH_PROBE.format(file=COMPLETIONS / "agentteams.bash")], config_root).splitlines()
    assert out[0] == "complete -o default -F _agentteams agentteams"
    assert out[1:] == ["team", "create show list delete export", "alpha beta", "--dry-run", "alpha beta"]


ZSH_PROBE = """
autoload -U compinit && compinit -u -d {dump}
source {file}
print -r -- "registered: $_comps[agentteams]"
compadd() {{ print -r -- "${{(j: :)${{(P)2}}}}" }}  # `compadd -a NAME`: print what would be offered
_files() {{ print -r -- files }}
t() {{ words=("$@"); CURRENT=$#words; _agentteams }}
t agentteams ''
t agentteams team show ''
t agentteams cleanup -
"""


def test_zsh_completion(config_root: Path, teams: list[str], tmp_path: Path) -> None:
    file = COMPLETIONS / "_agentteams"
    if shutil.which("zsh") is None:
        assert_names_every_command(file)  # no zsh here: at least the file is there and complete
        return
    run(["zsh", "-n", str(file)], config_root)
    probe = ZSH_PROBE.format(file=file, dump=tmp_path / "zcompdump")
    out = run(["zsh", "-f", "-c", probe], config_root).splitlines()
    assert out[0] == "registered: _agentteams"
    assert out[1].split() == top_level_commands()
    assert out[2:] == ["alpha beta", "--dry-run --json --help"]


def test_fish_completion(config_root: Path, teams: list[str]) -> None:
    file = COMPLETIONS / "agentteams.fish"
    if shutil.which("fish") is None:
        assert_names_every_command(file)  # no fish here: at least the file is there and complete
        return
    run(["fish", "--no-execute", str(file)], config_root)
    probe = f"source {file}; complete -C'agentteams '; echo ===; complete -C'agentteams task list '"
    offered, _, teams_offered = run(["fish", "--no-config", "-c", probe], config_root).partition("===\n")
    assert [line.split("\t")[0] for line in offered.splitlines()] == sorted(top_level_commands())
    assert teams_offered.split() == teams
