"""Run the Claude Agent SDK repository's e2e-tests (a directory given; none of it is kept here) unchanged against the
real `claude` and against ours, each with a scripted Messages API server (tests/support/sdk_e2e_script.py), and print
a table of each test's outcome with each CLI. Usage: python scripts/sdk_e2e.py E2E_DIR [-k EXPR] [--json OUT]."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentteams.mockapi import MockServer  # noqa: E402
from tests.support import realclaude as rc  # noqa: E402
from tests.support import sdk_e2e_script  # noqa: E402
from tests.support.cli import AGENTTEAMS  # noqa: E402
from tests.support.sdk_cli_patch import CLI_VAR  # noqa: E402


def _project(where: Path) -> None:
    """The working directory the tests that use cwd='.' explore: a package and a pytest test, as in the SDK repo."""
    (where / "src" / "claude_agent_sdk").mkdir(parents=True)
    for name in ("__init__.py", "client.py", "types.py"):
        (where / "src" / "claude_agent_sdk" / name).write_text("\n")
    (where / "tests").mkdir()
    (where / "tests" / "test_client.py").write_text("import pytest\n\n\ndef test_it() -> None:\n    pass\n")


def _outcomes(junit: Path) -> dict[str, tuple[str, str]]:
    """test id -> (passed/failed/error/skipped, the first line of why)."""
    found: dict[str, tuple[str, str]] = {}
    if not junit.is_file():
        return found
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}.py::{case.get('name')}"
        state, why = "passed", ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                state = "failed" if tag == "failure" else tag
                why = (node.get("message") or node.text or "").strip().splitlines()[0][:300] if (
                    node.get("message") or node.text) else ""  # fmt: skip
                break
        found[name] = (state, why)
    return found


def run_one(label: str, cli: Path, e2e: Path, scratch: Path, extra: list[str]) -> dict[str, tuple[str, str]]:
    """Run the e2e tests with `cli` in a fresh home and config; their outcomes (the log kept in `scratch`)."""
    cfg, work = scratch / "cfg", scratch / "work"
    work.mkdir(parents=True)
    _project(work)
    if label == "claude":
        rc.seed_home(cfg, [work], rc.NEWEST)
    junit = scratch / "junit.xml"
    with MockServer(sdk_e2e_script.script(), log_path=scratch / "requests.jsonl") as server:
        env = {**rc.claude_env(cfg, server.base_url), CLI_VAR: str(cli), "PYTHONPATH": str(ROOT),
               "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1", "PYTHONHASHSEED": "0"}  # fmt: skip
        argv = [sys.executable, "-m", "pytest", str(e2e), "-p", "tests.support.sdk_cli_patch", "-p",
                "no:cacheprovider", "--rootdir", str(e2e), "-q", "-rA", "--timeout", "240", "-n", "6",
                f"--junitxml={junit}", *extra]  # fmt: skip
        with (scratch / "pytest.log").open("w") as log:
            subprocess.run(argv, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=1800, check=False)
    return _outcomes(junit)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("e2e", type=Path, help="a directory holding the SDK repository's e2e-tests")
    parser.add_argument("-k", default=None, help="pytest's -k, to run some tests only")
    parser.add_argument("--json", type=Path, default=None, help="also write the table here")
    parser.add_argument("--keep", type=Path, default=None, help="keep logs (pytest.log, requests.jsonl) under here")
    args = parser.parse_args()
    e2e = args.e2e.resolve()
    extra = ["-k", args.k] if args.k else []
    base = args.keep or Path(tempfile.mkdtemp(prefix="sdk-e2e-"))
    clis = {"claude": rc.claude_bin(rc.NEWEST), "ours": Path(AGENTTEAMS)}
    os.environ.pop(CLI_VAR, None)
    results = {label: run_one(label, cli, e2e, base / label, extra) for label, cli in clis.items()}
    names = sorted(set(results["claude"]) | set(results["ours"]))
    width = max([len(n) for n in names] + [4])
    print(f"{'test':<{width}}  {'claude ' + rc.NEWEST:<15}  ours")
    for name in names:
        real, ours = (results[label].get(name, ("missing", ""))[0] for label in clis)
        print(f"{name:<{width}}  {real:<15}  {ours}")
    print(f"\nlogs: {base}/{{claude,ours}}/pytest.log, requests.jsonl")
    for name in names:
        real_got, ours_got = results["claude"].get(name, ("missing", "")), results["ours"].get(name, ("missing", ""))
        if real_got[0] == "passed" and ours_got[0] != "passed":
            print(f"\n{name}: ours {ours_got[0]}: {ours_got[1]}")
    if args.json:
        args.json.write_text(json.dumps({n: {k: results[k].get(n) for k in clis} for n in names}, indent=2))
    both = all(results["ours"].get(n, ("",))[0] == "passed" for n in names if results["claude"][n][0] == "passed")
    return 0 if both else 1


if __name__ == "__main__":
    sys.exit(main())
