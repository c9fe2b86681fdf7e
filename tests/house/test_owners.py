"""One owner per outside thing: libtmux and $TMUX (backends/tmux.py), the anthropic SDK (model/), cryptography
(store/signing.py), the mcp SDK (tools/mcp/connection.py), rich consoles (ui/), pid liveness (pids.py), nbformat
(tools/files/notebook.py), httpx and the HTML to markdown libraries (tools/web/fetch.py); and the teammate launcher
stays stdlib-only.
Read from the source, no imports."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentteams.pids import pid_alive
from tests.support.repo import ROOT

PACKAGE = ROOT / "agentteams"
SOURCES = sorted(PACKAGE.rglob("*.py"))
TMUX_ENV = frozenset({"TMUX", "TMUX_PANE", "AGENTTEAMS_TMUX_SOCKET"})
# rule -> the package paths (relative to agentteams/, a trailing "/" for a whole package) allowed to do it
OWNERS = {
    "libtmux": ("backends/tmux.py",),
    "tmux env": ("backends/tmux.py",),
    "anthropic": ("model/",),
    "cloud sdk": ("model/provider_sdk.py",),  # boto3 / botocore / google-auth: the Bedrock and Vertex extras
    "cryptography": ("store/signing.py",),
    "mcp": ("tools/mcp/connection.py",),  # the MCP SDK: servers' connections, on the hub's event-loop thread
    "rich console": ("ui/",),
    "pid_alive": ("pids.py",),
    "tomllib": ("team/teamfile/schema.py",),  # reading team files (with the key-to-line map of toml_positions.py)
    "tomli_w": ("team/teamfile/export.py",),  # writing them
    "nbformat": ("tools/files/notebook.py",),
    "web page": ("tools/web/fetch.py",),  # httpx, markdownify, bs4
}
# files another engineer is rewriting: each must still break its rule (else delete the entry here)
LAUNCHER = ("procs/launcher.py", "pids.py")  # started in every teammate pane: stdlib imports only


def _type_checking_only(tree: ast.AST) -> set[ast.AST]:
    """Nodes under `if TYPE_CHECKING:`: annotations, never run."""
    skipped: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            skipped.update(n for stmt in node.body for n in ast.walk(stmt))
    return skipped


def _imports(node: ast.AST) -> list[tuple[str, list[str]]]:
    """(module, names) an import statement brings in; `import a.b` is ("a.b", [])."""
    if isinstance(node, ast.Import):
        return [(a.name, []) for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [(node.module, [a.name for a in node.names])]
    return []


def _under(module: str, top: str) -> bool:
    return module == top or module.startswith(top + ".")


def _import_rules(module: str, names: list[str], runtime: bool) -> list[str]:
    found = [top for top in ("libtmux", "anthropic", "cryptography", "mcp") if _under(module, top)]
    found += ["cloud sdk" for top in ("boto3", "botocore", "google.auth") if _under(module, top)]
    found += [top for top in ("tomllib", "tomli_w") if _under(module, top)]
    found += ["nbformat" for top in ("nbformat",) if _under(module, top)]
    found += ["web page" for top in ("httpx", "markdownify", "bs4") if _under(module, top)]
    console = module == "rich.console" and (not names or "Console" in names)
    if runtime and (console or (module == "rich" and "console" in names)):  # one for annotations makes none
        found.append("rich console")
    if "pid_alive" in names and module != "agentteams.pids":
        found.append("pid_alive")
    return found


def rules_broken(node: ast.AST, runtime: bool) -> list[str]:
    """The owner rules one AST node breaks, wherever it is."""
    found = [rule for module, names in _imports(node) for rule in _import_rules(module, names, runtime)]
    if isinstance(node, ast.Constant) and node.value in TMUX_ENV:
        found.append("tmux env")
    if isinstance(node, ast.Call):
        func = node.func
        if (func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)) == "Console":
            found.append("rich console")
    if isinstance(node, ast.FunctionDef) and node.name == "pid_alive":
        found.append("pid_alive")
    return found


def violations(source: str, rel: str) -> list[str]:
    """`rel:line: rule` for each rule broken outside its owner (`rel` is the path below agentteams/)."""
    tree = ast.parse(source)
    annotations_only = _type_checking_only(tree)
    found = []
    for node in ast.walk(tree):
        for rule in rules_broken(node, node not in annotations_only):
            if not any(rel == o or (o.endswith("/") and rel.startswith(o)) for o in OWNERS[rule]):
                found.append(f"{rel}:{getattr(node, 'lineno', 0)}: {rule} (owner: {', '.join(OWNERS[rule])})")
    return sorted(set(found))


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


@pytest.mark.parametrize("path", SOURCES, ids=_rel)
def test_each_outside_thing_is_used_only_by_its_owner(path: Path) -> None:
    found = violations(path.read_text(encoding="utf-8"), _rel(path))
    assert found == [], "use the owner's calls instead:\n" + "\n".join(found)


def test_the_check_catches_planted_violations(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        '"""Planted."""\nimport os\nimport libtmux\nfrom anthropic import Anthropic\nfrom rich.console import Console\n'
        'from agentteams.store.presence import pid_alive\npane = os.environ.get("TMUX_PANE")\nc = Console()\n'
        "def pid_alive(pid: int) -> bool:\n    return True\n"
    )
    source = bad.read_text()
    assert violations(source, "team/bad.py") == [
        "team/bad.py:3: libtmux (owner: backends/tmux.py)",
        "team/bad.py:4: anthropic (owner: model/)",
        "team/bad.py:5: rich console (owner: ui/)",
        "team/bad.py:6: pid_alive (owner: pids.py)",
        "team/bad.py:7: tmux env (owner: backends/tmux.py)",
        "team/bad.py:8: rich console (owner: ui/)",
        "team/bad.py:9: pid_alive (owner: pids.py)",
    ]
    assert [v.split(": ")[1] for v in violations(source, "ui/bad.py")] == [
        "libtmux (owner", "anthropic (owner", "pid_alive (owner", "tmux env (owner", "pid_alive (owner",
    ]  # fmt: skip
    crypto = '"""Planted."""\nfrom cryptography.exceptions import InvalidSignature\n'
    assert violations(crypto, "team/x.py") == ["team/x.py:2: cryptography (owner: store/signing.py)"]
    cloud = '"""Planted."""\nimport botocore.auth\nfrom google.auth import default\n'
    owner = "cloud sdk (owner: model/provider_sdk.py)"
    assert violations(cloud, "model/x.py") == [f"model/x.py:2: {owner}", f"model/x.py:3: {owner}"]
    toml = '"""Planted."""\nimport tomllib\nimport tomli_w\n'
    assert violations(toml, "team/x.py") == [
        "team/x.py:2: tomllib (owner: team/teamfile/schema.py)",
        "team/x.py:3: tomli_w (owner: team/teamfile/export.py)"]  # fmt: skip
    typing_only = '"""Planted."""\nif TYPE_CHECKING:\n    from rich.console import Console\n'
    assert violations(typing_only, "cli/x.py") == []


@pytest.mark.parametrize("rel", LAUNCHER)
def test_the_launcher_imports_only_the_stdlib(rel: str) -> None:
    tree = ast.parse((PACKAGE / rel).read_text(encoding="utf-8"))
    modules = {module for node in ast.walk(tree) for module, _ in _imports(node)}
    foreign = {m for m in modules if m.split(".")[0] not in sys.stdlib_module_names and m != "agentteams.pids"}
    assert not foreign, f"{rel} runs before every teammate: keep it stdlib-only (found {sorted(foreign)})"


@pytest.fixture
def zombie() -> Iterator[int]:
    """A child that has exited and is not reaped yet."""
    proc = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while Path(f"/proc/{proc.pid}/stat").read_bytes().rpartition(b")")[2].split()[0] != b"Z":
        assert time.monotonic() < deadline, "the child never exited"
        time.sleep(0.005)
    yield proc.pid
    proc.wait()


def test_pid_alive(zombie: int) -> None:
    assert pid_alive(os.getpid()) and pid_alive(1)  # pid 1 may be another user's: EPERM still means it runs
    assert not pid_alive(zombie)
    assert not pid_alive(0) and not pid_alive(-1)
