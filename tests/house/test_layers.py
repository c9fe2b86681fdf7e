"""DESIGN.md §2: packages are the layers; a module imports only from its own or a lower layer, nothing
imports `cli`, and no import is relative. This table is the source of truth; the README mirrors it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.repo import ROOT

PACKAGE = ROOT / "agentteams"

LAYERS: dict[str, int] = {
    "__init__": 0, "errors": 0, "diagnostics": 0, "pids": 0,
    "store": 1, "settings": 1,
    "model": 2, "backends": 2, "mockapi": 2,
    "tools": 3,
    "agent": 4,
    "team": 5,
    "cli": 6, "ui": 6, "__main__": 6,
}  # fmt: skip


def top_unit(path: Path) -> str:
    """The layer unit a source file belongs to: its package below `agentteams`, or the leaf module."""
    return path.relative_to(PACKAGE).with_suffix("").parts[0]


def _is_unit(name: str) -> bool:
    return (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file()


def imported_units(path: Path) -> list[str]:
    """Every `agentteams` unit a file imports (absolute imports; relative ones are refused separately)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "agentteams":
                names += [f"agentteams.{a.name if _is_unit(a.name) else '__init__'}" for a in node.names]
            else:
                names.append(node.module)
    return [n.split(".")[1] for n in names if n.startswith("agentteams.")]


def relative_imports(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level > 0]


def violations(path: Path, own: str) -> list[str]:
    found = [f"{path.name}:{line}: relative import (write `from agentteams.…`)" for line in relative_imports(path)]
    for dep in imported_units(path):
        if dep == own:
            continue
        if dep == "cli" and own != "__main__":
            found.append(f"{path.name} imports cli: nothing may")
        elif dep not in LAYERS:
            found.append(f"{path.name} imports agentteams.{dep}, which has no layer")
        elif LAYERS[dep] > LAYERS[own]:
            found.append(f"{own} (L{LAYERS[own]}) imports {dep} (L{LAYERS[dep]})")
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_every_package_and_leaf_has_a_layer() -> None:
    unknown = sorted({top_unit(p) for p in SOURCES} - set(LAYERS))
    assert not unknown, f"add these to a layer in tests/house/test_layers.py (and the README): {unknown}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_respect_layers(path: Path) -> None:
    assert violations(path, top_unit(path)) == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_docstring_and_size(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree)
    assert doc, f"{path} needs a 1-3 line docstring saying what it owns"
    assert len([ln for ln in doc.splitlines() if ln.strip()]) <= 3, f"{path}: module docstring longer than 3 lines"
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 400, f"{path} is over 400 lines"


def test_the_layer_check_catches_planted_violations(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from agentteams.cli import main\nimport agentteams.team.lead\nfrom .sibling import x\n"
        "from agentteams import diagnostics\n"
    )
    assert imported_units(bad) == ["cli", "team", "diagnostics"]
    found = violations(bad, "store")
    assert found == [
        "bad.py:3: relative import (write `from agentteams.…`)",
        "bad.py imports cli: nothing may",
        "store (L1) imports team (L5)",
    ]
    assert violations(bad, "__main__") == ["bad.py:3: relative import (write `from agentteams.…`)"]


def test_the_readme_layer_table_matches() -> None:
    """The README's architecture table lists each package in the layer this table gives it."""
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    rows = [ln for ln in readme.splitlines() if ln.startswith("| L") and "|" in ln[3:]]
    shown: dict[str, int] = {}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        layer = int(cells[0][1:])
        for name in cells[1].replace("`", "").replace("/", "").split(","):
            shown[name.strip()] = layer
    expected = {k: v for k, v in LAYERS.items() if not k.startswith("__")}
    assert shown == expected
