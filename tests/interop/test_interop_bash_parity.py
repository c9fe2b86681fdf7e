"""Interop tier, the permission parity corpus (tests/support/bash_corpus.py): the newest real `claude -p` and our
`agentteams -p` in the same scratch repository, with the same settings and the same scripted tool calls.

The table documents what Claude Code does (the real CLI must still match it: a new release that changes is caught);
ours must never allow what it refuses, and may differ only in the rows listed in STRICTER, each with its reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.bash_corpus import ARRANGEMENTS, STRICTER
from tests.support.cli import Cli
from tests.support.permworld import Arrangement, Observed, ids, launcher, run_batch

pytestmark = pytest.mark.timeout(300)


def test_the_corpus_is_large_enough() -> None:
    rows = [c for a in ARRANGEMENTS for c in a.cases]
    assert len(rows) >= 80, len(rows)
    assert len({(a.name, c.row) for a in ARRANGEMENTS for c in a.cases}) == len(rows), "row names repeat"
    assert set(STRICTER) <= {(a.name, c.row) for a in ARRANGEMENTS for c in a.cases}


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("arr", ARRANGEMENTS, ids=ids(ARRANGEMENTS))
def test_ours_is_never_looser_than_the_real_cli(
    claude: Path, claude_version: str, cli: Cli, arr: Arrangement, tmp_path: Path
) -> None:
    world = tmp_path / "world"
    real = run_batch(world, arr, claude_version, [str(claude)], launcher(180))
    ours = run_batch(world, arr, claude_version, cli.argv(), launcher(180))
    shown = _table(arr, real, ours)
    print("\n" + shown)
    assert [o.outcome for o in real] == [c.expected(claude_version) for c in arr.cases], shown
    looser = [c.row for c, r, o in zip(arr.cases, real, ours, strict=True) if o.outcome == "allow" != r.outcome]
    assert not looser, f"ours allows what Claude Code refuses: {looser}\n{shown}"
    differ = {c.row for c, r, o in zip(arr.cases, real, ours, strict=True) if o.outcome != r.outcome}
    assert differ == {row for (name, row) in STRICTER if name == arr.name}, shown


def _table(arr: Arrangement, real: list[Observed], ours: list[Observed]) -> str:
    lines = [f"[{arr.name}]"]
    for case, r, o in zip(arr.cases, real, ours, strict=True):
        row = case.row.replace("\n", "\\n")
        lines.append(f"  {row[:60]:<60} expect {case.expect!s:<6} real {r.outcome!s:<6} ours {o.outcome}")
    return "\n".join(lines)
