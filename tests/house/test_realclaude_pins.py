"""The pinned Claude Code versions (and the TypeScript Agent SDK's): CI installs exactly the ones the interop tests
run against, and each version is found where the README says (its own npm prefix, or its own override variable)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import realclaude as rc
from tests.support import ts_sdk

CI = rc.ROOT / ".ci" / "run"


def test_ci_installs_exactly_the_pinned_versions() -> None:
    script = CI.read_text(encoding="utf-8")
    lists = re.findall(r'^CLAUDE_CODE_VERSIONS="([^"]*)"$', script, re.M)
    assert len(lists) == 1, f".ci/run should set CLAUDE_CODE_VERSIONS once: {lists}"
    assert tuple(lists[0].split()) == rc.PINNED
    # and names no other version anywhere (a second, stale pin in a comment or an install line) but the TS SDK's
    assert set(re.findall(r"\b\d+\.\d+\.\d+\b", script)) == {*rc.PINNED, ts_sdk.VERSION}
    assert re.findall(r'^TS_SDK_VERSION="([^"]*)"$', script, re.M) == [ts_sdk.VERSION]
    # each goes into a prefix of its own, the one realclaude.py looks in
    assert 'prefix=".cache/claude-code/$version"' in script
    assert rc.prefix("2.1.330") == rc.ROOT / ".cache" / "claude-code" / "2.1.330"


def test_the_default_is_the_newest_pinned_version() -> None:
    as_tuple = [tuple(int(p) for p in v.split(".")) for v in rc.VERSIONS]
    assert as_tuple == sorted(as_tuple) and len(set(as_tuple)) == len(as_tuple)
    assert rc.VERSIONS[-1] == rc.DEFAULT == rc.NEWEST
    assert rc.VERSIONS == rc.PINNED  # the whole interop tier runs against every version CI installs


def test_a_per_version_override_names_the_executable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "claude-330"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CLAUDE_BIN_2_1_330", str(fake))
    assert rc.override_var("2.1.330") == "CLAUDE_BIN_2_1_330"
    assert rc.claude_bin("2.1.330") == fake
    monkeypatch.setenv("CLAUDE_BIN_2_1_330", str(tmp_path / "missing"))
    with pytest.raises(rc.RealClaudeMissing, match="CLAUDE_BIN_2_1_330"):
        rc.claude_bin("2.1.330")


def test_an_unpinned_version_is_refused() -> None:
    with pytest.raises(ValueError, match="not one of the pinned versions"):
        rc.claude_bin("2.1.200")
