"""The CLI's exit skips the interpreter's teardown only when nothing is lost: atexit handlers run, buffered output is
flushed, the exit code kept, and a thread that is not a daemon is waited for as Python would."""

from __future__ import annotations

import subprocess
import sys

import pytest

LEAVE = "import atexit, sys, threading, time\nfrom agentteams.cli import _leave\n"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LEAVE + code], capture_output=True, text=True, timeout=30, check=False)


@pytest.mark.parametrize(("ending", "status"), [("3", 3), ("None", 0), ("0", 0)])
def test_atexit_runs_and_the_unflushed_output_and_code_survive(ending: str, status: int) -> None:
    proc = _run(f"atexit.register(lambda: print('atexit ran'))\nsys.stdout.write('no newline yet')\n"
                f"_leave(SystemExit({ending}))\n")  # fmt: skip
    assert (proc.returncode, proc.stdout) == (status, "no newline yetatexit ran\n")


def test_a_thread_still_working_is_waited_for() -> None:
    proc = _run("threading.Thread(target=lambda: (time.sleep(0.3), print('thread done', flush=True))).start()\n"
                "_leave(SystemExit(4))\n")  # fmt: skip
    assert (proc.returncode, proc.stdout) == (4, "thread done\n")


def test_a_message_as_the_exit_is_printed_as_python_prints_it() -> None:
    proc = _run("_leave(SystemExit('a message'))\n")
    assert (proc.returncode, proc.stderr) == (1, "a message\n")
