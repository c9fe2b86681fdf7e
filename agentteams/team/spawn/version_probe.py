"""Which teammate program the lead starts: ours, or a real `claude` new enough to take `--lead-verify-key`, asked
once with `--version` in the background."""

from __future__ import annotations

import re
import threading

from agentteams import diagnostics

FIRST_SIGNING_CLAUDE = (2, 1, 330)  # the first Claude Code verified to take --lead-verify-key (2.1.197 exits on it)
VERSION_WAIT = 10.0  # seconds a teammate program may take to print its version


class VersionProbe:
    """`<command> --version`, asked once in the background when the teammate program is not ours."""

    def __init__(self, command: list[str], *, ours: bool = False) -> None:
        self.command = command
        self._answer: str | None = "agentteams" if ours else None
        self._thread: threading.Thread | None = None
        if self._answer is None:
            self._thread = threading.Thread(target=self._ask, name="teammate-version", daemon=True)
            self._thread.start()

    def _ask(self) -> None:
        import subprocess

        try:
            proc = subprocess.run(
                [*self.command, "--version"], capture_output=True, text=True, timeout=VERSION_WAIT, check=False,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
            self._answer = proc.stdout.strip()
        except (OSError, subprocess.SubprocessError) as e:
            self._answer = ""
            diagnostics.debug("teammate command %s --version: %s", self.command, e)

    def is_ours(self) -> bool:
        """Whether the teammate program is agentteams (which takes every change its lead sends, team/lead/)."""
        return self._answered().startswith("agentteams")

    def _answered(self) -> str:
        if self._thread is not None:
            self._thread.join(VERSION_WAIT)
        return self._answer or ""

    def takes_lead_key(self) -> bool:
        answer = self._answered()
        if answer.startswith("agentteams"):
            return True
        m = re.match(r"^(\d+)\.(\d+)\.(\d+) \(Claude Code\)", answer)
        # an older claude exits on an unknown option; any other program gets no key rather than a failed start
        return m is not None and tuple(int(g) for g in m.groups()) >= FIRST_SIGNING_CLAUDE
