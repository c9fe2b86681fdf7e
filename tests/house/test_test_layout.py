"""The test suite's own layout: test modules sit in a folder by area, never directly in tests/; every folder with
Python files is a package with a docstring (module names may repeat across folders); and nothing imports a test
module or a conftest: what modules share lives in tests/support/, or as a fixture in a conftest."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.repo import TESTS


def _is_test_module(name: str) -> bool:
    """A dotted module name's last part names a test module or a conftest."""
    last = name.rsplit(".", 1)[-1]
    return last.startswith("test_") or last == "conftest"


def _imported_modules(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of every module `path` imports, relative imports resolved against its package and a
    name imported `from` a package counted when it is a module of that package (`from tests.x import test_y`)."""
    package = ".".join(path.relative_to(root.parent).parent.parts)
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.append((node.lineno, module))
            folder = root.parent.joinpath(*module.split("."))
            found += [(node.lineno, f"{module}.{a.name}") for a in node.names if (folder / f"{a.name}.py").is_file()]
    return found


def layout_faults(root: Path) -> list[str]:
    """Everything wrong with the layout of the test suite in `root` (a `tests` folder), one line each."""
    faults = [f"{p.relative_to(root.parent)}: a test module directly in {root.name}/" for p in root.glob("test_*.py")]
    folders = sorted({p.parent for p in root.rglob("*.py")})
    for folder in folders:
        init = folder / "__init__.py"
        if not init.is_file():
            faults.append(f"{folder.relative_to(root.parent)}/: no __init__.py")
        elif not ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))):
            faults.append(f"{init.relative_to(root.parent)}: no docstring saying what the folder holds")
    for path in sorted(root.rglob("*.py")):
        for line, module in _imported_modules(path, root):
            if module.split(".")[0] == root.name and _is_test_module(module):
                faults.append(f"{path.relative_to(root.parent)}:{line} imports {module}")
    return faults


def test_the_suite_is_laid_out_by_area_and_no_test_module_is_imported() -> None:
    faults = layout_faults(TESTS)
    # the way out of each: a test module goes in the folder of its area; what modules share goes in tests/support/,
    # or (a fixture) in the conftest of the folder above all that use it
    assert faults == [], "\n".join(faults)


def test_the_layout_check_catches_planted_faults(tmp_path: Path) -> None:
    """The same check on a planted suite: each kind of fault is found, and the allowed shapes are not."""
    root = tmp_path / "tests"
    files = {
        "__init__.py": '"""The suite."""\n',
        "conftest.py": "import pytest\n",
        "test_flat.py": "def test_x() -> None: ...\n",
        "area/__init__.py": '"""An area."""\n',
        "area/conftest.py": "SHARED = 1\n",
        "area/test_a.py": "from tests.other.test_b import helper\nfrom tests.area.conftest import SHARED\n",
        "area/test_c.py": "from . import test_a\nfrom .conftest import SHARED\nimport tests.other.test_b\n",
        "area/test_d.py": "from tests.support.kit import test_shared, tool\nfrom tests import support\n",
        "other/__init__.py": "",
        "other/test_b.py": "def helper() -> None: ...\n",
        "loose/test_e.py": "from tests.other import test_b\n",
        "support/__init__.py": '"""Helpers."""\n',
        "support/kit.py": "def test_shared() -> None: ...\ndef tool() -> None: ...\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    assert layout_faults(root) == [
        "tests/test_flat.py: a test module directly in tests/",
        "tests/loose/: no __init__.py",
        "tests/other/__init__.py: no docstring saying what the folder holds",
        "tests/area/test_a.py:1 imports tests.other.test_b",
        "tests/area/test_a.py:2 imports tests.area.conftest",
        "tests/area/test_c.py:1 imports tests.area.test_a",
        "tests/area/test_c.py:2 imports tests.area.conftest",
        "tests/area/test_c.py:3 imports tests.other.test_b",
        "tests/loose/test_e.py:1 imports tests.other.test_b",
    ]
