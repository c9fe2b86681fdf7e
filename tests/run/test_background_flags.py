"""What a background session's job file keeps of its command line for `respawn`: never a credential."""

from __future__ import annotations

import json

from agentteams.run.background import storable_flags


def test_inline_settings_lose_their_credentials_and_keep_everything_else() -> None:
    inline = {"env": {"ANTHROPIC_API_KEY": "sk-ant-SECRET", "FOO": "1"}, "model": "opus"}
    kept = storable_flags(["--model", "haiku", "--settings", json.dumps(inline), f"--settings={json.dumps(inline)}"])
    assert "sk-ant-SECRET" not in json.dumps(kept)
    assert kept[:3] == ["--model", "haiku", "--settings"]
    assert json.loads(kept[3]) == {"env": {"FOO": "1"}, "model": "opus"}
    assert json.loads(kept[4].removeprefix("--settings=")) == {"env": {"FOO": "1"}, "model": "opus"}


def test_a_settings_path_and_settings_without_credentials_are_kept_as_given() -> None:
    plain = '{"env": {"FOO": "1"}}'
    args = ["--settings", "/home/me/s.json", "--settings", plain, "-n", "x"]
    assert storable_flags(args) == args
