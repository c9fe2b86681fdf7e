"""Interop tier, the Agent SDK's own examples (its PyPI sdist's examples/, unchanged; tests/support/sdk_examples.py)
run against the newest real `claude` and against ours, each with the same scripted model: an example that works with
the real CLI must work with ours and print the same, parse the same messages and leave the same files."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support import sdk_examples as ex
from tests.support.cli import Cli

pytestmark = pytest.mark.timeout(600)


def _env(tmp_path: Path, who: str, version: str | None) -> dict[str, str]:
    cfg = tmp_path / who / "cfg"
    if version:
        rc.seed_home(cfg, [tmp_path / who / "sdk"], version)
    return {**rc.claude_env(cfg, "unused"), "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1"}


def _shown(outcome: ex.Outcome) -> str:
    return "\n".join([f"exit {outcome.code}", *outcome.lines, f"kinds {outcome.kinds}", f"files {outcome.files}",
                      "stderr:", outcome.stderr[-3000:]])  # fmt: skip


@pytest.mark.interop
def test_every_example_in_the_sdist_is_run_or_said_why_not() -> None:
    assert ex.unlisted_examples() == []


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("name", list(ex.CASES))
def test_an_sdk_example_does_the_same_with_ours_as_with_the_real_cli(
    claude: Path, claude_version: str, cli: Cli, tmp_path: Path, name: str
) -> None:
    # side by side: each has its own copy, config root and scripted server, and several examples spend most of their
    # time waiting (async_iterable_prompt's 30 s drain timeout), which one after the other doubled
    with ThreadPoolExecutor(2) as pool:
        running = pool.submit(ex.run, name, claude, _env(tmp_path, "real", claude_version), tmp_path / "real" / "sdk")
        ours = ex.run(name, Path(cli.argv()[0]), _env(tmp_path, "ours", None), tmp_path / "ours" / "sdk")
        real = running.result()
    if real.code == 0:
        assert ours.code == 0, f"exits {ours.code} with ours, 0 with the real CLI\nours:\n{_shown(ours)}"
    if name in ex.UNORDERED:
        ours.lines.sort()
        real.lines.sort()
    assert ours == real, f"ours:\n{_shown(ours)}\n\nreal:\n{_shown(real)}"
