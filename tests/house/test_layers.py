"""The house rules of the package: packages are the layers (a module imports only from its own or a lower layer,
nothing imports `cli`, no relative import), folders keep their own rules, and no import circle of any kind exists.
The layer table is docs/architecture.md's; this test reads it from there."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.repo import ROOT

PACKAGE = ROOT / "agentteams"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

MAX_LINES = 400

# folders that may not import each other, or other units (besides the layer order)
FORBIDDEN = [
    ("store/file", "store/redis", "the two stores share rules through store's top, never each other"),
    ("store/redis", "store/file", "the two stores share rules through store's top, never each other"),
    ("procs", "team", "the process machinery is handed what its children run"),
    ("procs", "run", "the process machinery is handed what its children run"),
    ("procs", "cli", "the process machinery is handed what its children run"),
    ("team/teammate", "team/lead", "a teammate never runs the lead's code"),
    ("store", "settings", "the store is below the settings: it is lent what it needs of them"),
]


def read_layers(text: str) -> dict[str, int]:
    """The layer table: rows `| L<n> | `pkg/`, `leaf` | ... |` give each unit its layer."""
    layers: dict[str, int] = {"__init__": 0, "__main__": 8}
    for row in text.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) < 2 or not re.fullmatch(r"L\d+", cells[0]):
            continue
        for name in re.findall(r"`([\w]+)/?`", cells[1]):
            layers[name] = int(cells[0][1:])
    return layers


LAYERS = read_layers(ARCHITECTURE.read_text(encoding="utf-8"))
SOURCES = sorted(PACKAGE.rglob("*.py"))


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@dataclass(frozen=True)
class Edge:
    """One import: who imports what, where, and how (module level, inside a function, or for type checking)."""

    source: str
    target: str
    line: int
    kind: str  # "module" | "local" | "typing"


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports_by_kind(node: ast.AST, kind: str = "module") -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Each import below `node` with its kind, in one walk: under an `if TYPE_CHECKING:` body it is "typing",
    else under a function's body "local", else "module"."""
    for field, value in ast.iter_fields(node):
        inner = kind
        if field == "body" and _is_type_checking(node):
            inner = "typing"
        elif field == "body" and kind != "typing" and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inner = "local"
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, inner
            if isinstance(child, ast.AST):
                yield from _imports_by_kind(child, inner)


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A source's tree, parsed once a process: several tests read every module."""
    return ast.parse(path.read_text(encoding="utf-8"))


def imports_of(path: Path, modules: set[str], package: Path = PACKAGE) -> list[Edge]:
    """Every import of a module of the package that `path` makes: `from a.b import c` is an edge to `a.b.c` when
    that is a module, else to `a.b`."""
    source = module_name(path, package)
    edges: list[Edge] = []
    for node, kind in _imports_by_kind(parsed(path)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif node.module and node.level == 0:
            targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                       for a in node.names]  # fmt: skip
        for name in targets:
            target = name
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != source:
                edges.append(Edge(source, target, node.lineno, kind))
    return edges


def folder(module: str) -> str:
    return module.rpartition(".")[0]


def counted(edge: Edge) -> bool:
    """A type-checking import back into its own folder is the one import allowed to close a circle."""
    return not (edge.kind == "typing" and folder(edge.source) == folder(edge.target))


def cycles(edges: list[Edge]) -> list[list[str]]:
    """The import circles (strongly connected components of two or more modules), by Tarjan's algorithm."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if counted(e):
            graph.setdefault(e.source, set()).add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def all_edges(package: Path = PACKAGE) -> list[Edge]:
    sources = sorted(package.rglob("*.py"))
    modules = {module_name(p, package) for p in sources}
    return [e for p in sources for e in imports_of(p, modules, package)]


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def in_folder(module: str, where: str) -> bool:
    return module == "agentteams." + where.replace("/", ".") or module.startswith(
        "agentteams." + where.replace("/", ".") + "."
    )


def violations(edges: list[Edge], layers: dict[str, int]) -> list[str]:
    found: list[str] = []
    for e in edges:
        own, dep = unit(e.source), unit(e.target)
        if dep == own:
            pass
        elif dep == "cli" and own != "__main__":
            found.append(f"{e.source}:{e.line} imports {e.target}: nothing may import cli")
        elif dep not in layers or own not in layers:
            found.append(f"{e.source}:{e.line} imports {e.target}: {dep if dep not in layers else own} has no layer")
        elif layers[dep] > layers[own]:
            found.append(f"{e.source}:{e.line}: {own} (L{layers[own]}) imports {dep} (L{layers[dep]})")
        for src, dst, why in FORBIDDEN:
            if in_folder(e.source, src) and in_folder(e.target, dst):
                found.append(f"{e.source}:{e.line} imports {e.target}: {why}")
    return found


@functools.cache
def package_edges() -> list[Edge]:
    """The package's imports, found when a test first asks (not at collection, in every xdist worker)."""
    return all_edges()


def test_every_package_and_leaf_has_a_layer() -> None:
    unknown = sorted({unit(module_name(p)) for p in SOURCES} - set(LAYERS))
    assert not unknown, f"add these to the layer table in docs/architecture.md: {unknown}"


def test_imports_respect_layers_and_folders() -> None:
    assert violations(package_edges(), LAYERS) == []


def test_no_import_circle() -> None:
    assert cycles(package_edges()) == []


# every relative import has this in its text (`from .x`, `from..x`, `from`, a line continuation, then the dot): the
# modules without it need not be parsed
MAYBE_RELATIVE = re.compile(r"\bfrom(?:\s|\\\n)*\.")


def test_no_relative_import() -> None:
    relative = [
        f"{p.relative_to(PACKAGE)}:{node.lineno}"
        for p in SOURCES
        if MAYBE_RELATIVE.search(p.read_text(encoding="utf-8"))
        for node, _ in _imports_by_kind(parsed(p))
        if isinstance(node, ast.ImportFrom) and node.level > 0
    ]
    assert relative == []


def test_the_relative_import_filter_lets_every_form_through() -> None:
    forms = [
        "from . import x",
        "from .a import b",
        "from..a import b",
        "if x: from .a import b",
        "from \\\n  .a import b",
    ]
    for form in forms:
        assert [n.level > 0 for n, _ in _imports_by_kind(ast.parse(form)) if isinstance(n, ast.ImportFrom)] == [True]
        assert MAYBE_RELATIVE.search(form), form
    assert not MAYBE_RELATIVE.search("from agentteams.a import b  # from the top, as a name")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_docstring_and_size(path: Path) -> None:
    doc = ast.get_docstring(parsed(path))
    assert doc, f"{path} needs a 1-3 line docstring saying what it owns"
    assert len([ln for ln in doc.splitlines() if ln.strip()]) <= 3, f"{path}: module docstring longer than 3 lines"
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES, f"{path} is over {MAX_LINES} lines"


def _plant(root: Path, files: dict[str, str]) -> Path:
    package = root / "agentteams"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'"""planted."""\n{text}')
    for d in [package, *[p for p in package.rglob("*") if p.is_dir()]]:
        (d / "__init__.py").touch()
    return package


@pytest.mark.parametrize(
    "kind, files",
    [
        ("module", {"a/x.py": "import agentteams.a.y\n", "a/y.py": "from agentteams.a import x\n"}),
        ("local", {"a/x.py": "import agentteams.a.y\n", "a/y.py": "def f():\n    from agentteams.a.x import g\n"}),
        (
            "typing across folders",
            {"a/x.py": "import agentteams.b.y\n",
             "b/y.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agentteams.a.x import X\n"},
        ),
    ],
)  # fmt: skip
def test_a_planted_cycle_of_each_kind_is_caught(tmp_path: Path, kind: str, files: dict[str, str]) -> None:
    assert cycles(all_edges(_plant(tmp_path, files))) != [], kind


def test_a_typing_back_reference_inside_one_folder_is_allowed(tmp_path: Path) -> None:
    back = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agentteams.a.x import X\n"
    files = {"a/x.py": "import agentteams.a.y\n", "a/y.py": back}
    assert cycles(all_edges(_plant(tmp_path, files))) == []


def test_planted_layer_and_folder_violations_are_caught(tmp_path: Path) -> None:
    package = _plant(
        tmp_path,
        {"store/file/teams.py": "from agentteams.store.redis import teams\n",
         "store/redis/teams.py": "def f():\n    import agentteams.store.file.teams\n",
         "store/paths.py": "from agentteams.team import lead\nfrom agentteams.cli import main\n",
         "team/lead.py": "", "cli/main.py": "", "procs/fork.py": "import agentteams.run.x\n", "run/x.py": ""},
    )  # fmt: skip
    found = violations(all_edges(package), {"store": 1, "team": 5, "cli": 8, "procs": 3, "run": 7})
    assert any("store.file.teams:2 imports agentteams.store.redis.teams" in f for f in found)
    assert any("store.redis.teams:3 imports agentteams.store.file.teams" in f for f in found)
    assert any("store (L1) imports team (L5)" in f for f in found)
    assert any("nothing may import cli" in f for f in found)
    assert any("procs.fork:2 imports agentteams.run.x" in f for f in found)
