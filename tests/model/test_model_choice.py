"""Which model a name sends, as Claude Code 2.1.332 chooses it (observed against the scripted server): `opusplan`
follows the permission mode, an alias with no 1M form is refused by /model and set_model as `haiku[1m]`, and retired
first-party ids go to the opus alias's model where first-party ids are sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentteams.agent.session import Session, SessionOptions
from agentteams.model.aliases import plan_model, resolve_model, switch_refusal
from agentteams.model.catalog import ALIASES
from agentteams.store.paths import Layout
from tests.support.fake_model import FakeModel, text, tool

OPUS, SONNET = ALIASES["opus"], ALIASES["sonnet"]
BEDROCK = {"CLAUDE_CODE_USE_BEDROCK": "1"}
AWS = {"CLAUDE_CODE_USE_ANTHROPIC_AWS": "1"}
GOOGLE = {"CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD": "1"}


@pytest.mark.parametrize("name", ["claude-opus-4-0", "claude-opus-4-1", "claude-opus-4-20250514",
                                  "claude-opus-4-1-20250805", "CLAUDE-OPUS-4-1", "claude-opus-4-1[1m]"])  # fmt: skip
@pytest.mark.parametrize("env", [{}, AWS, GOOGLE])
def test_a_retired_opus_id_sends_the_opus_alias_model(name: str, env: dict[str, str]) -> None:
    assert resolve_model(name, env) == OPUS
    assert resolve_model(name, {**env, "ANTHROPIC_DEFAULT_OPUS_MODEL": "claude-custom-x"}) == "claude-custom-x"


@pytest.mark.parametrize("name", ["claude-opus-4", "claude-opus-4-5", "claude-3-opus-20240229", "claude-sonnet-4-0"])
def test_ids_claude_keeps_are_sent_as_given(name: str) -> None:
    assert resolve_model(name, {}) == name


def test_bedrock_sends_a_retired_id_as_its_own() -> None:
    assert resolve_model("claude-opus-4-1", BEDROCK) == "claude-opus-4-1"  # then mapped to Bedrock's id of it


def test_opusplan_names_opus_for_plan_mode_only() -> None:
    assert (resolve_model("opusplan", {}), plan_model("opusplan", {})) == (SONNET, OPUS)
    assert plan_model("OpusPlan[1m]", {}) == OPUS + "[1m]"
    assert plan_model("opusplan", {"ANTHROPIC_DEFAULT_OPUS_MODEL": "claude-x"}) == "claude-x"
    assert [plan_model(n, {}) for n in ("opus", "sonnet", "best", "default", "claude-opus-5-5")] == [None] * 5


@pytest.mark.parametrize("name", ["haiku[1m]", "HAIKU[1M]", " haiku[1m] "])
def test_haiku_has_no_1m_form_to_switch_to(name: str) -> None:
    said = switch_refusal(name)
    assert said is not None and said.startswith(f"'{name.strip()}' isn't available:") and "/model haiku" in said


@pytest.mark.parametrize("name", ["haiku", "sonnet[1m]", "opus[1m]", "fable[1m]", "best[1m]", "opusplan[1m]",
                                  "claude-haiku-4-5[1m]", "claude-haiku-5-5[1m]"])  # fmt: skip
def test_other_1m_names_may_be_switched_to(name: str) -> None:
    assert switch_refusal(name) is None


def session(tmp_path: Path, layout: Layout, model: FakeModel, mode: str, name: str = "opusplan") -> Session:
    options = SessionOptions(cwd=tmp_path, permission_mode=mode, model=name, interactive=True)
    return Session(options, model, layout=layout)


def test_opusplan_plans_with_opus_and_works_with_sonnet_after_exit_plan_mode(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_DEFAULT_OPUS_MODEL", raising=False)
    monkeypatch.delenv("ANTHROPIC_DEFAULT_SONNET_MODEL", raising=False)
    target = tmp_path / "out.txt"
    model = FakeModel([[tool("ExitPlanMode", plan="1. write out.txt")],
                       [tool("Write", file_path=str(target), content="done\n")], [text("Finished.")]])  # fmt: skip
    s = session(tmp_path, layout, model, "plan")
    s.agent.ask = lambda _q: "always"
    s.run("plan it, then do it")
    assert [r.model for r in model.requests] == [OPUS, SONNET, SONNET] and target.exists()


def test_the_model_follows_each_mode_change_and_model_switch(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_DEFAULT_OPUS_MODEL", raising=False)
    monkeypatch.delenv("ANTHROPIC_DEFAULT_SONNET_MODEL", raising=False)
    model = FakeModel([], default=text("ok"))
    s = session(tmp_path, layout, model, "default")
    s.run("one")
    s.switch_mode("plan")  # Shift-Tab
    s.run("two")
    s.set_model("sonnet")  # a plain alias: plan mode changes nothing
    s.run("three")
    s.set_model("opusplan")
    s.run("four")
    s.policy.mode = "acceptEdits"  # set_permission_mode
    s.run("five")
    assert [r.model for r in model.requests] == [SONNET, OPUS, SONNET, OPUS, SONNET]
