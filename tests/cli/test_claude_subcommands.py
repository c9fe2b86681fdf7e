"""Claude Code's subcommands typed to ours: none reaches the model (a mock API sees no request), each answers in
its own way (a line and exit 1 where it cannot apply); `purge` shows its plan and deletes only once confirmed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.paths import project_slug
from tests.support.cli import Cli
from tests.support.headless import script

# each of claude 2.1.332's words (and 2.1.197's `project`), with arguments a person would give; the expected exit
# (None: the background-session commands, issue 31's, whose answers are theirs to define)
RUNS: list[tuple[list[str], int | None]] = [
    (["agents", "--json"], None), (["stop", "abc"], None), (["kill", "abc"], None), (["respawn", "--all"], None),
    (["rm", "abc"], None),
    (["update"], 0), (["upgrade"], 0), (["install", "--force", "latest"], 1), (["import", "codex", "--dry-run"], 1),
    (["setup-token"], 1), (["gateway", "--config", "g.yaml"], 1), (["ultrareview", "123"], 1),
    (["auto-mode", "config"], 1), (["auto-mode", "critique"], 1), (["auth", "status"], 0), (["auth", "login"], 1),
    (["plugin", "list"], 0), (["plugins", "list", "--json"], 0), (["plugin", "install", "x@y"], 1),
    (["mcp", "list"], 0), (["mcp", "serve"], 1), (["purge", "--dry-run", "/nowhere"], 1), (["doctor"], 0),
    (["config", "list"], 0), (["config", "get", "model"], 1), (["project", "purge", "--dry-run", "/nowhere"], 1),
]  # fmt: skip


def test_no_subcommand_sends_a_request_to_the_model(cli: Cli, work: Path) -> None:
    with MockServer(script("SHOULD NOT BE ASKED")) as server:
        env = {**cli.env(), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-test-key"}
        for args, code in RUNS:
            proc = cli(*args, env=env, cwd=work, input="")
            if code is None:
                continue  # still run: it must not reach the model either
            assert proc.returncode == code or (args == ["doctor"] and proc.returncode in (0, 1)), (args, proc.stderr)
            if code == 1 and args[0] not in ("purge", "project", "config"):
                assert len(proc.stderr.strip().splitlines()) == 1, (args, proc.stderr)  # one line says why
            assert "SHOULD NOT BE ASKED" not in proc.stdout
        # doctor's reachability check is a HEAD of the base URL; anything else would be a model request
        asked = [f"{r['method']} {r['path']}" for r in server.requests if r["method"] != "HEAD"]
        assert asked == []
        assert [r["path"] for r in server.requests] == ["/"]  # the test can see a request: doctor's HEAD


def test_auth_status_says_which_credential_without_showing_it(cli: Cli, config_root: Path) -> None:
    key = "sk-ant-api03-distinctive-QzXwVkJm"
    env = {**cli.env(), "ANTHROPIC_API_KEY": key}
    proc = cli("auth", "status", env=env)
    status = json.loads(proc.stdout)
    assert (status["loggedIn"], status["authMethod"], status["apiKeySource"]) == (True, "api_key", "ANTHROPIC_API_KEY")
    assert status["configDirectory"] == str(config_root)
    assert key[-8:] not in proc.stdout + proc.stderr
    none = {k: v for k, v in env.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    proc = cli("auth", "status", "--text", env=none)
    assert proc.returncode == 1 and "Not logged in" in proc.stdout


def _project_data(config_root: Path, project: Path) -> tuple[Path, Path]:
    folder = config_root / "projects" / project_slug(str(project))
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_text("{}\n")
    tasks = config_root / "tasks" / "s1"
    tasks.mkdir(parents=True)
    state = {"keep": 1, "projects": {str(project): {"hasTrustDialogAccepted": True}, "/other": {"x": 1}}}
    (config_root / ".claude.json").write_text(json.dumps(state))
    return folder, tasks


def test_purge_shows_its_plan_and_deletes_only_when_confirmed(cli: Cli, config_root: Path, work: Path) -> None:
    folder, tasks = _project_data(config_root, work)
    dry = cli("purge", str(work), "--dry-run")
    assert dry.returncode == 0 and "Dry run: 3 item(s) would be deleted." in dry.stdout
    assert f'config: projects["{work}"]' in dry.stdout and f"dir:    {tasks}" in dry.stdout
    declined = cli("purge", str(work), input="n\n")
    assert declined.returncode == 1 and "Stopped. Nothing was deleted." in declined.stderr
    assert folder.is_dir() and tasks.is_dir()
    done = cli("purge", str(work), input="y\n")
    assert done.returncode == 0 and f"Purged 3 items for {work}." in done.stdout, done.stdout
    assert not folder.exists() and not tasks.exists()
    state = json.loads((config_root / ".claude.json").read_text())
    assert state == {"keep": 1, "projects": {"/other": {"x": 1}}}  # the rest of claude's state file kept
    again = cli("purge", str(work), "-y")
    assert again.returncode == 1 and again.stderr.startswith("No Claude Code project data found")


@pytest.mark.parametrize("words", [["purge"], ["purge", "--all", "/x"]])
def test_purge_needs_a_path_or_all_but_not_both(cli: Cli, words: list[str]) -> None:
    proc = cli(*words)
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1


def test_config_keeps_its_own_form_and_takes_list_and_get(cli: Cli, config_root: Path, work: Path) -> None:
    (config_root / "settings.json").write_text(json.dumps({"model": "opus", "permissions": {"allow": ["Bash(ls)"]}}))
    plain, listed = cli("config", cwd=work), cli("config", "list", cwd=work)
    assert plain.returncode == listed.returncode == 0 and plain.stdout == listed.stdout and "opus" in plain.stdout
    assert cli("config", "get", "model", cwd=work).stdout == "opus\n"
    assert json.loads(cli("config", "get", "permissions.allow", cwd=work).stdout) == ["Bash(ls)"]
    assert json.loads(cli("config", "--json", cwd=work).stdout)["settings"]["model"] == "opus"
    refused = cli("config", "set", "model", "sonnet", cwd=work)
    assert refused.returncode == 1 and "has no `config set`" in refused.stderr
