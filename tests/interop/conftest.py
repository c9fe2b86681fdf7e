"""What the interop tests share as fixtures: a scratch project directory for the real CLI and ours to work in."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    return path
