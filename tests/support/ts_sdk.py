"""The TypeScript Agent SDK (`@anthropic-ai/claude-agent-sdk` from npm), installed into the project's cache on first
use (as .ci/run installs it), and a program of it run with node against a CLI: ESM resolves packages from the
program's own directory, so the program is copied into the install's prefix first."""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.support.realclaude import CACHE, RealClaudeMissing

PACKAGE = "@anthropic-ai/claude-agent-sdk"
VERSION = "0.3.332"  # keep in step with .ci/run (TS_SDK_VERSION)
PREFIX = CACHE.parent / "claude-agent-sdk-ts" / VERSION
PROGRAMS = Path(__file__).resolve().parent


def installed() -> bool:
    try:
        found = json.loads((PREFIX / "node_modules" / PACKAGE / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(found, dict) and found.get("version") == VERSION


def ensure() -> Path:
    """The install's prefix, installing it first when missing; RealClaudeMissing when npm cannot."""
    if installed():
        return PREFIX
    npm = shutil.which("npm")
    if npm is None:
        raise RealClaudeMissing(f"the TypeScript SDK tests need npm: run .ci/run, or npm install {PACKAGE}@{VERSION}")
    PREFIX.mkdir(parents=True, exist_ok=True)
    with (PREFIX.parent / f".install-{VERSION}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test processes must not install into one prefix at once
        if installed():
            return PREFIX
        proc = subprocess.run(
            [npm, "install", "--prefix", str(PREFIX), "--save-exact", "--no-audit", "--no-fund", "--loglevel=error",
             f"{PACKAGE}@{VERSION}"], capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise RealClaudeMissing(f"npm install {PACKAGE}@{VERSION} failed: {proc.stderr.strip()[-300:]}")
    return PREFIX


def run(program: str, cli: Path, cwd: Path, env: dict[str, str], timeout: float = 120) -> dict[str, Any]:
    """Run `tests/support/<program>` with node against `cli`; the JSON line it prints."""
    prefix = ensure()
    copy = prefix / program
    shutil.copyfile(PROGRAMS / program, copy)
    proc = subprocess.run(["node", str(copy), str(cli), str(cwd)], env=env, cwd=prefix, capture_output=True,
                          text=True, timeout=timeout, check=False)  # fmt: skip
    assert proc.returncode == 0, f"{program} against {cli} exited {proc.returncode}: {proc.stderr[-2000:]}"
    found: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return found
