"""The lead's memory of "yes, and don't ask again" for a teammate's questions: the same call again passes unasked,
never a call that goes further than the one the person allowed, and never another teammate's."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from agentteams.store.protocol import PermissionRequest
from agentteams.team.lead.permission_relay import Remembered


class _Bash:
    name, kind = "Bash", "execute"

    def permission_target(self, args: dict[str, Any], _cwd: Path) -> str:
        return str(args["command"])


def _ask(command: str) -> PermissionRequest:
    return PermissionRequest(request_id="r", agent_id="amy@t", tool_name="Bash", tool_use_id="u", description="",
                             input={"command": command}, permission_suggestions=[])  # fmt: skip


def test_a_remembered_prefix_never_lets_a_protected_write_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    session = cast(Any, SimpleNamespace(options=SimpleNamespace(cwd=tmp_path), tool=lambda _name: _Bash()))
    remembered = Remembered()
    [update] = remembered.add(session, _ask("touch a1"), "amy")
    assert update == {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "touch a1:*"}],
                      "behavior": "allow", "destination": "session"}  # fmt: skip
    assert remembered.covers(session, _ask("touch a1 b"), "amy")
    assert not remembered.covers(session, _ask("touch a1 > ~/.bashrc"), "amy")
    assert not remembered.covers(session, _ask("touch a1; rm -rf b"), "amy")
    assert not remembered.covers(session, _ask("touch a1 b"), "bob")
