"""DESIGN.md §2: a module imports only from its own or a lower layer, and nothing imports `cli`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "agentteams"

LAYERS: dict[str, int] = {
    "__init__": 0, "errors": 0, "paths": 0, "prompts": 0, "report": 0,
    "locking": 1, "atomicio": 1, "protocol": 1, "records": 1,
    "teams": 2, "mailbox": 2, "tasks": 2, "permissions": 2, "model": 2, "backends": 2, "mockapi": 2,
    "transcript": 2, "presence": 2, "delivery": 2,
    "tools": 3,
    "agent": 4,
    "teammate": 5, "lead": 5, "spawning": 5, "wake": 5, "session": 5, "janitor": 5, "teamview": 5,
    "cli": 6, "ui": 6, "__main__": 6,
}  # fmt: skip


def top_module(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    return rel.parts[0]


def _is_module(name: str) -> bool:
    return (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file()


def imported_modules(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "agentteams":
                names += [f"agentteams.{a.name if _is_module(a.name) else '__init__'}" for a in node.names]
            else:
                names.append(node.module)
    return [n.split(".")[1] for n in names if n.startswith("agentteams.")]


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_layer() -> None:
    unknown = sorted({top_module(p) for p in SOURCES} - set(LAYERS))
    assert not unknown, f"add these modules to a layer in tests/test_layers.py: {unknown}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_respect_layers(path: Path) -> None:
    own = top_module(path)
    for dep in imported_modules(path):
        if dep == own:
            continue
        assert dep != "cli" or own == "__main__", f"{path.name} imports cli: nothing may"
        assert LAYERS[dep] <= LAYERS[own], f"{own} (L{LAYERS[own]}) imports {dep} (L{LAYERS[dep]})"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_docstring_and_size(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if path.name != "__init__.py" or tree.body:
        doc = ast.get_docstring(tree)
        assert doc, f"{path} needs a 1-3 line docstring saying what it owns"
        assert len([ln for ln in doc.splitlines() if ln.strip()]) <= 3, f"{path}: module docstring longer than 3 lines"
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 400, f"{path} is over 400 lines"


def test_the_layer_check_catches_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from agentteams.cli import main\nimport agentteams.tasks\n")
    assert imported_modules(bad) == ["cli", "tasks"]
