"""The one CLI runner: `agentteams` (the installed console script) as a real process. Tests get it through the
`cli` fixture (tests/conftest.py), which is what marks them `proc`."""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

AGENTTEAMS = str(Path(sys.executable).with_name("agentteams"))  # what a user, a tmux pane or a real lead runs


class Cli:
    """Runs `agentteams ARGS` in the environment `env()` gives (made afresh for every run, so that a test's
    monkeypatched variables count) unless a run names its own; the CLI must never print a traceback."""

    def __init__(self, env: Callable[[], dict[str, str]], timeout: float = 60.0) -> None:
        if not Path(AGENTTEAMS).is_file():
            raise RuntimeError(f"no console script {AGENTTEAMS}: install the project with pip install -e '.[dev]'")
        self._env = env
        self.timeout = timeout
        self.started: list[subprocess.Popen[str]] = []

    def env(self) -> dict[str, str]:
        return self._env()

    def with_env(self, env: Mapping[str, str], timeout: float | None = None) -> Cli:
        """The same runner in another environment (e.g. as if inside a tmux pane)."""
        other = Cli(lambda: dict(env), self.timeout if timeout is None else timeout)
        other.started = self.started  # one list: the fixture ends whatever either started
        return other

    def argv(self, *args: str) -> list[str]:
        return [AGENTTEAMS, *args]

    def line(self, *args: str) -> str:
        """The command as one shell word list, for a tmux pane."""
        return shlex.join(self.argv(*args))

    def __call__(
        self,
        *args: str,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        input: str | None = None,
        timeout: float | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run to the end, output captured."""
        proc = subprocess.run(
            self.argv(*args), env=self.env() if env is None else env, cwd=cwd, input=input, capture_output=True,
            text=True, encoding="utf-8", timeout=self.timeout if timeout is None else timeout, check=False,
        )  # fmt: skip
        assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
        return proc

    def popen(self, *args: str, env: Mapping[str, str] | None = None, **kwargs: Any) -> subprocess.Popen[str]:
        """Start it and return at once (`kwargs` go to Popen: stdin, stdout, cwd, ...); killed after the test if
        it still runs then."""
        proc: subprocess.Popen[str] = subprocess.Popen(
            self.argv(*args), env=self.env() if env is None else env, text=True, **kwargs
        )
        self.started.append(proc)
        return proc

    def end(self) -> None:
        """Kill what `popen` started and still runs."""
        for proc in self.started:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
