"""Settings files: Claude Code's precedence (table-driven), array concatenation, provenance, bad files, apiKeyHelper."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentteams.settings.keyhelper import KeyHelperError, credentials_env, run_key_helper
from agentteams.settings.load import SettingsError, load_settings
from agentteams.settings.types import SCOPES, Settings

FILE_SCOPES = ("user", "project", "local", "managed")


class Project:
    """A scratch project with a config root and a managed file of its own."""

    def __init__(self, tmp: Path, root: Path) -> None:
        self.cwd, self.root, self.managed = tmp / "proj", root, tmp / "managed-settings.json"
        (self.cwd / ".claude").mkdir(parents=True)

    def path(self, scope: str) -> Path:
        return {"user": self.root / "settings.json", "project": self.cwd / ".claude" / "settings.json",
                "local": self.cwd / ".claude" / "settings.local.json", "managed": self.managed}[scope]  # fmt: skip

    def write(self, scope: str, data: Any) -> Path:
        path = self.path(scope)
        path.write_text(data if isinstance(data, str) else json.dumps(data))
        return path

    def load(self, flag: str | None = None) -> Settings:
        return load_settings(self.cwd, flag=flag, root=self.root, managed=self.managed)


@pytest.fixture
def proj(tmp_path: Path, config_root: Path) -> Project:
    return Project(tmp_path, config_root)


def test_scopes_are_claude_codes_order() -> None:
    assert SCOPES == ("user", "project", "local", "flag", "managed")


# which scopes set `model` -> the scope whose value wins (Claude Code: managed > --settings > local > project > user)
PRECEDENCE = [
    (("user",), "user"),
    (("user", "project"), "project"),
    (("project", "local"), "local"),
    (("user", "project", "local"), "local"),
    (("user", "local", "flag"), "flag"),
    (("user", "project", "local", "flag", "managed"), "managed"),
    (("user", "managed"), "managed"),
    (("project", "flag"), "flag"),
]


@pytest.mark.parametrize(("present", "winner"), PRECEDENCE, ids=["+".join(p) for p, _ in PRECEDENCE])
def test_precedence_of_a_scalar(proj: Project, present: tuple[str, ...], winner: str) -> None:
    flag = None
    for scope in present:
        data = {"model": f"model-{scope}", "teammateMode": "in-process", f"only{scope}": 1}
        if scope == "flag":
            flag = json.dumps(data)
        else:
            proj.write(scope, data)
    s = proj.load(flag)
    assert s.model == f"model-{winner}"
    assert s.origins["model"].scope == winner
    assert s.teammate_mode == "in-process"
    assert all(s.merged[f"only{scope}"] == 1 for scope in present)  # other keys fall through from every scope


def test_rule_arrays_concatenate_across_scopes_with_their_files(proj: Project) -> None:
    user = proj.write("user", {"permissions": {"allow": ["Read", "Bash(ls)"], "deny": ["Bash(rm:*)"]}})
    project = proj.write("project", {"permissions": {"allow": ["Bash(ls)", "Edit"], "ask": ["Bash(git push:*)"]}})
    local = proj.write("local", {"permissions": {"deny": ["WebFetch"], "additionalDirectories": ["../lib"]}})
    s = proj.load('{"permissions": {"allow": ["Bash(make:*)"]}}')
    assert s.permissions.allow == ("Read", "Bash(ls)", "Edit", "Bash(make:*)")  # deduplicated, lowest scope first
    assert s.permissions.deny == ("Bash(rm:*)", "WebFetch")
    assert s.permissions.ask == ("Bash(git push:*)",)
    assert s.permissions.additional_directories == ("../lib",)
    where = {k: v.path for k, v in s.origins.items()}
    assert where["permissions.allow[1]"] == str(user) and where["permissions.allow[2]"] == str(project)
    assert where["permissions.allow[3]"] == "--settings JSON" and where["permissions.deny[1]"] == str(local)


def test_objects_merge_key_by_key(proj: Project) -> None:
    proj.write("user", {"env": {"A": "user", "B": "user"}, "permissions": {"defaultMode": "plan"}})
    proj.write("local", {"env": {"B": "local"}, "permissions": {"allow": ["Edit"]}})
    s = proj.load()
    assert s.env == {"A": "user", "B": "local"}
    assert s.permissions.default_mode == "plan" and s.permissions.allow == ("Edit",)
    assert s.origins["env.A"].scope == "user" and s.origins["env.B"].scope == "local"


def test_every_key_we_read_is_typed(proj: Project) -> None:
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}
    proj.write("project", {
        "permissions": {"allow": ["Edit"], "deny": ["Bash(rm:*)"], "ask": ["Bash(git:*)"], "defaultMode": "acceptEdits",
                        "additionalDirectories": ["/tmp/x"]},
        "env": {"K": "v"}, "model": "opus", "hooks": hooks, "teammateMode": "tmux", "cleanupPeriodDays": 7,
        "apiKeyHelper": "echo k", "someFutureKey": {"x": 1}, "statusLine": {"type": "command"},
    })  # fmt: skip
    s = proj.load()
    assert (s.model, s.teammate_mode, s.cleanup_period_days, s.api_key_helper) == ("opus", "tmux", 7, "echo k")
    assert s.hooks == hooks and s.env == {"K": "v"} and s.problems == ()
    assert s.permissions.default_mode == "acceptEdits" and s.permissions.additional_directories == ("/tmp/x",)


def test_no_files_no_settings(proj: Project) -> None:
    s = proj.load()
    assert s == Settings(origins={}, merged={}) and s.for_teammate() is None


def test_malformed_json_is_one_line_with_file_line_and_column_and_the_rest_still_loads(proj: Project) -> None:
    proj.write("user", {"model": "opus", "env": {"A": "1"}})
    bad = proj.write("project", '{\n  "model": "haiku",\n  "permissions": {"allow": ["Bash(ls)"],}\n}\n')
    s = proj.load()
    [line] = s.problems
    assert str(bad) in line and ":3:" in line and "not valid JSON" in line and "ignored" in line
    assert s.model == "opus" and s.env == {"A": "1"} and s.permissions.allow == ()  # nothing of the bad file


def test_a_wrong_value_costs_that_key_and_what_the_file_grants_never_its_deny_rules(proj: Project) -> None:
    bad = proj.write("local", {"permissions": {"allow": "Bash(ls)", "deny": ["Read(./secret.txt)"]}, "model": 5,
                               "env": {"A": "ok"}, "teammateMode": "tmux"})  # fmt: skip
    s = proj.load()
    assert len(s.problems) == 2 and all(str(bad) in p for p in s.problems)
    text = "\n".join(s.problems)
    assert "permissions.allow (expected array, got string) is ignored" in text
    assert "model (expected string, got number) is ignored" in text and "(env)" in text
    # Claude Code ignores such a file whole: what it grants (env here) waits for the fix; its deny rules and its
    # plain preferences apply
    assert s.model is None and s.env == {} and s.permissions.deny == ("Read(./secret.txt)",)
    assert s.teammate_mode == "tmux"


@pytest.mark.parametrize("mode", ["manual", "default", "plan", "dontAsk"])
def test_a_newer_mode_or_a_strict_one_keeps_the_whole_file(proj: Project, mode: str) -> None:
    proj.write("project", {"permissions": {"defaultMode": mode, "deny": ["Read(./secret.txt)"], "allow": ["Bash(ls)"]}})
    s = proj.load()
    assert s.problems == () and s.permissions.default_mode == mode
    assert s.permissions.deny == ("Read(./secret.txt)",) and s.permissions.allow == ("Bash(ls)",)


def test_an_unknown_mode_is_one_line_and_the_deny_rules_stay(proj: Project) -> None:
    bad = proj.write("project", {"permissions": {"defaultMode": "nonsense", "deny": ["Read(./s)"], "allow": ["Bash"]}})
    s = proj.load()
    [line] = s.problems
    assert str(bad) in line and "permissions.defaultMode" in line and "'nonsense'" in line
    assert s.permissions.default_mode is None and s.permissions.deny == ("Read(./s)",) and s.permissions.allow == ()


def test_a_wrong_rule_entry_costs_only_that_entry(proj: Project) -> None:
    proj.write("project", {"permissions": {"allow": ["Bash(ls)", 5], "frob": 1, "deny": ["Bash(rm:*)"]}})
    s = proj.load()
    assert len(s.problems) == 2 and {"permissions.allow[1]", "permissions.frob"} <= set(" ".join(s.problems).split())
    assert s.permissions.allow == ("Bash(ls)",) and s.permissions.deny == ("Bash(rm:*)",)


def test_unparseable_inline_settings_stop_the_run(proj: Project) -> None:
    with pytest.raises(SettingsError, match="invalid JSON given to --settings"):
        proj.load('{"model": "opus",}')


def test_inline_settings_of_a_wrong_type_are_left_out_and_said(proj: Project) -> None:
    proj.write("user", {"model": "opus"})
    s = proj.load('{"model": "haiku", "permissions": []}')
    assert s.model == "haiku"  # the rest of the layer applies
    [line] = s.problems
    assert "--settings JSON: permissions (expected object, got array) is ignored" in line


def test_settings_file_flag(proj: Project, tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="settings file not found"):
        proj.load(str(tmp_path / "missing.json"))
    broken = tmp_path / "broken.json"
    broken.write_text('{"model": }')
    with pytest.raises(SettingsError, match=f"invalid JSON in --settings file {broken}:1:11"):
        proj.load(str(broken))
    given = tmp_path / "extra.json"
    given.write_text('{"model": "from-file"}')
    s = proj.load(str(given))
    assert s.model == "from-file" and s.origins["model"].path == str(given)


def test_a_teammate_inherits_everything_but_env(proj: Project) -> None:
    proj.write("project", {"model": "opus", "env": {"TOKEN": "secret-value-123"}, "permissions": {"deny": ["Edit"]},
                           "apiKeyHelper": "pass show anthropic"})  # fmt: skip
    passed = proj.load().for_teammate()
    assert passed is not None and "secret-value-123" not in passed and "TOKEN" not in passed
    assert json.loads(passed) == {"model": "opus", "permissions": {"deny": ["Edit"]},
                                  "apiKeyHelper": "pass show anthropic"}  # fmt: skip


# -- apiKeyHelper -------------------------------------------------------------------------------------------

HELPER_KEY = "sk-helper-0123456789abcdef"


def test_key_helper_output_is_the_key(tmp_path: Path) -> None:
    assert run_key_helper(f"echo '  {HELPER_KEY}  '", tmp_path) == HELPER_KEY


def test_key_helper_runs_only_without_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "ran"
    helper = f"touch {marker}; echo {HELPER_KEY}"
    assert credentials_env(helper, tmp_path, {"ANTHROPIC_API_KEY": "k"}) == {"ANTHROPIC_API_KEY": "k"}
    assert not marker.exists()
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    env = credentials_env(helper, tmp_path)
    assert env["ANTHROPIC_API_KEY"] == HELPER_KEY and marker.exists()
    assert "ANTHROPIC_API_KEY" not in os.environ  # a copy: tools and teammates never inherit the key


@pytest.mark.parametrize(
    ("command", "message"),
    [(f"echo {HELPER_KEY}; echo {HELPER_KEY} >&2; exit 3", "exited with status 3: ***"), ("true", "printed no key")],
)
def test_key_helper_failures_never_show_the_key(tmp_path: Path, command: str, message: str) -> None:
    with pytest.raises(KeyHelperError) as caught:
        run_key_helper(command, tmp_path)
    assert message in str(caught.value) and HELPER_KEY not in str(caught.value)


def test_key_helper_timeout(tmp_path: Path) -> None:
    with pytest.raises(KeyHelperError, match=r"did not finish within 0\.2s"):
        run_key_helper("sleep 5", tmp_path, timeout=0.2)
