"""The program's answers to permission questions (agentteams/run/sdk/asks.py), with an in-memory channel: an allow's
new input and rules are taken, a mode it may not switch to is refused, no answer is a deny."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agentteams.agent.permissions.policy import PermissionPolicy
from agentteams.agent.turn_types import PermissionAsk
from agentteams.errors import AgentTeamsError
from agentteams.run.sdk.asks import ToolAsks


class Answering:
    """A channel whose program answers every request with `answer` (or fails with `error`)."""

    def __init__(self, answer: dict[str, Any] | None = None, error: str = "") -> None:
        self.answer, self.error = answer or {}, error
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def request(self, subtype: str, body: dict[str, Any], timeout: float = 0) -> dict[str, Any]:
        self.sent.append((subtype, body))
        if self.error:
            raise AgentTeamsError(self.error)
        return self.answer


def asks(tmp_path: Path, channel: Answering, *, may_bypass: bool = False) -> tuple[ToolAsks, PermissionPolicy]:
    policy = PermissionPolicy(cwd=tmp_path, interactive=True)
    session = SimpleNamespace(policy=policy, options=SimpleNamespace(cwd=tmp_path))
    return ToolAsks(channel, session, may_bypass=may_bypass), policy  # type: ignore[arg-type]


def bash(command: str) -> PermissionAsk:
    return PermissionAsk("Bash", command, {"command": command}, "needs permission", tool_use_id="toolu_1")


def test_an_allow_runs_the_program_s_input_and_keeps_its_session_rule(tmp_path: Path) -> None:
    rule = {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "touch a"}], "behavior": "allow",
            "destination": "session"}  # fmt: skip
    channel = Answering({"behavior": "allow", "updatedInput": {"command": "touch b"}, "updatedPermissions": [rule]})
    tool_asks, policy = asks(tmp_path, channel)
    asked = bash("touch a")
    assert tool_asks(asked) == "allow" and asked.updated_input == {"command": "touch b"}
    assert policy.decide("Bash", "execute", "touch a").behavior == "allow"
    subtype, body = channel.sent[0]
    assert subtype == "can_use_tool" and body["tool_use_id"] == "toolu_1" and body["input"] == {"command": "touch a"}


def test_a_mode_the_session_may_not_take_is_refused_and_the_rest_applies(tmp_path: Path) -> None:
    modes = [{"type": "setMode", "mode": "bypassPermissions", "destination": "session"},
             {"type": "addDirectories", "directories": [str(tmp_path / "more")], "destination": "session"}]  # fmt: skip
    tool_asks, policy = asks(tmp_path, Answering({"behavior": "allow", "updatedPermissions": modes}))
    assert tool_asks(bash("touch a")) == "allow"
    assert policy.mode == "default" and policy.additional_dirs == [tmp_path / "more"]
    allowed, policy = asks(tmp_path, Answering({"behavior": "allow", "updatedPermissions": modes}), may_bypass=True)
    allowed(bash("touch a"))
    assert policy.mode == "bypassPermissions"


def test_a_deny_tells_its_message_and_no_answer_is_a_deny(tmp_path: Path) -> None:
    tool_asks, _ = asks(tmp_path, Answering({"behavior": "deny", "message": "not now", "interrupt": True}))
    asked = bash("rm -rf x")
    assert tool_asks(asked) == "deny" and asked.feedback == "not now" and asked.stop_turn
    silent, _ = asks(tmp_path, Answering(error="the program's input ended: no answer to can_use_tool"))
    asked = bash("rm -rf x")
    assert silent(asked) == "deny" and not asked.stop_turn


def test_acceptedits_is_offered_for_a_command_it_would_run_and_not_for_another(tmp_path: Path) -> None:
    channel = Answering({"behavior": "deny", "message": "no"})
    ask, _policy = asks(tmp_path, channel)
    ask(bash("touch hi.txt"))
    ask(bash("python3 hello.py"))
    (_, touch), (_, run) = channel.sent
    cwd = str(tmp_path.resolve())
    assert [s["type"] for s in touch["permission_suggestions"]] == ["addRules", "addDirectories", "setMode"]
    assert touch["permission_suggestions"][1]["directories"] == [cwd] and touch["blocked_path"] == f"{cwd}/hi.txt"
    assert [s["type"] for s in run["permission_suggestions"]] == ["addRules"] and "blocked_path" not in run
