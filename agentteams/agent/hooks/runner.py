"""Running hooks: the matching commands of an event side by side under `/bin/sh -c` in the agent's cwd, the JSON
payload on stdin, `CLAUDE_PROJECT_DIR` set, no credentials in the environment or payload, each killed (its whole
process group) at its timeout. `HookRunner.fire` returns the interpreted `Outcome`; problems are warning lines.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from agentteams import diagnostics
from agentteams.agent.hooks.spec import HookCommand, HookRun, Outcome, configured, interpret, selected
from agentteams.errors import AgentTeamsError
from agentteams.settings.keyhelper import without_secrets
from agentteams.settings.types import Settings
from agentteams.tools.shell.process import DRAIN_GRACE_S, OutputCapture

# events whose payload has no permission_mode (Claude Code's docs, and what the real 2.1.330 sends)
NO_PERMISSION_MODE = ("SessionStart", "SessionEnd", "PreCompact")
KILL_GRACE = 2.0  # seconds to collect what a killed hook's pipes still hold
# a hook's output kept (its head and tail, each stream): ten megabytes of it must not become a request's
HOOK_OUTPUT_CHARS = 100_000
# Who is told of each hook's start and end (a driven session's stream-json `hook_started`/`hook_response` lines),
# with the session it ran for: process-wide, as the runners are made deep inside sessions, an in-process teammate's
# too (the session id tells them apart)
HookObserver = Callable[[str, dict[str, Any]], None]
_observers: list[HookObserver] = []


def observe(observer: HookObserver) -> Callable[[], None]:
    """Tell `observer` of every hook run from now on; the call that stops it."""
    _observers.append(observer)
    return lambda: _observers.remove(observer) if observer in _observers else None


def _notify(session_id: str, line: dict[str, Any]) -> None:
    for observer in list(_observers):
        observer(session_id, line)


def _observed(
    run: Callable[[HookCommand], HookRun], session_id: str, event: str, match: str | None
) -> Callable[[HookCommand], HookRun]:
    """`run`, its start and its end told to the observers as Claude Code 2.1.332's stream-json hook lines say them."""
    if not _observers:
        return run

    def observed(hook: HookCommand) -> HookRun:
        ids = {"hook_id": str(uuid.uuid4()), "hook_name": f"{event}:{match}" if match else event, "hook_event": event}
        _notify(session_id, {"type": "system", "subtype": "hook_started", **ids})
        done = run(hook)
        _notify(session_id, {
            "type": "system", "subtype": "hook_response", **ids, "output": done.stdout + done.stderr,
            "stdout": done.stdout, "stderr": done.stderr, "exit_code": done.code,
            "outcome": "success" if done.code == 0 else "error",
        })  # fmt: skip
        return done

    return observed


def hook_env(project_dir: Path) -> dict[str, str]:
    """Ours without any credential (the apiKeyHelper's key never enters os.environ), plus CLAUDE_PROJECT_DIR."""
    env = without_secrets(os.environ)
    env["CLAUDE_PROJECT_DIR"] = str(project_dir)
    return env


def run_command(hook: HookCommand, payload: str, cwd: Path, env: dict[str, str]) -> HookRun:
    """One hook to its end or its timeout; in a session of its own so a timeout kills everything it started. An SDK
    program's hook is its callback, whose JSON answer is read as a command's JSON output."""
    if hook.callback is not None:
        return _call_back(hook, payload)
    import subprocess  # a command's run: a stream-json session observes hooks before (and without) any

    try:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", hook.command], cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
    except OSError as e:
        return HookRun(hook, None, stderr=e.strerror or str(e))
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out, err = OutputCapture(proc.stdout, HOOK_OUTPUT_CHARS), OutputCapture(proc.stderr, HOOK_OUTPUT_CHARS)
    threading.Thread(target=_feed, args=(proc.stdin, payload), name="hook-stdin", daemon=True).start()
    try:
        proc.wait(timeout=hook.timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        _drained(out, err, KILL_GRACE)  # a grandchild that left the group may hold the pipes: stop reading
        return HookRun(hook, None, _text(out), _text(err), timed_out=True)
    _drained(out, err, DRAIN_GRACE_S)  # done when it exits: a child it left running (`sleep 60 &`) holds nothing up
    return HookRun(hook, proc.returncode, _text(out), _text(err))


def _feed(stdin: IO[bytes], payload: str) -> None:
    """The payload on the hook's stdin (from a thread: a hook that reads none must not block us on a full pipe)."""
    with contextlib.suppress(OSError), stdin:  # it ended, or never reads: what it did not take is no error
        stdin.write(payload.encode("utf-8", "surrogatepass"))


def _drained(out: OutputCapture, err: OutputCapture, grace: float) -> None:
    """What the pipes hold within `grace` (one deadline for both), then no more reading."""
    deadline = time.monotonic() + grace
    for capture in (out, err):
        if not capture.join(max(0.0, deadline - time.monotonic())):
            capture.stop()


def _text(capture: OutputCapture) -> str:
    return capture.text().replace("\r\n", "\n").replace("\r", "\n")  # as a text-mode pipe reads it


def _call_back(hook: HookCommand, payload: str) -> HookRun:
    """An SDK program's hook: its answer as output, its failure (an error reply, no reply in time) as a non-blocking
    error, as a command's exit 1 is, or as a block (exit 2) when the program set `onFailure: block`."""
    assert hook.callback is not None
    try:
        answer = hook.callback(json.loads(payload), hook.timeout)
    except AgentTeamsError as e:
        return HookRun(hook, 2 if hook.fail_closed else 1, stderr=str(e))
    return HookRun(hook, 0, json.dumps(answer))


class HookRunner:
    """The configured hooks of one agent session and the fields every payload carries."""

    def __init__(
        self, settings: Settings, *, cwd: Path, session_id: str, transcript_path: str,
        permission_mode: Callable[[], str], secrets: Sequence[str | None] = (),
        warn: Callable[[str], None] | None = None,
    ) -> None:  # fmt: skip
        self.hooks, problems = configured(settings)
        self.cwd = cwd
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.permission_mode = permission_mode
        self.secrets = [s for s in secrets if s]
        self.warn = warn or (lambda line: diagnostics.warning("%s", line))
        self._later: list[threading.Thread] = []
        # the person's prompt the agent works on: every payload after it names it, as the real 2.1.330's do
        # (a teammate, which gets messages and never a person's prompt, sends none)
        self.prompt_id: str | None = None
        for p in problems:
            self.warn(p)

    def active(self, event: str) -> bool:
        return any(h.event == event for h in self.hooks)

    def add(self, hooks: Sequence[HookCommand]) -> None:
        """More hooks from now on (an SDK program's, from its `initialize`), after the settings' own."""
        self.hooks = [*self.hooks, *hooks]

    def new_prompt(self) -> None:
        self.prompt_id = str(uuid.uuid4())

    def payload(self, event: str, fields: dict[str, Any]) -> dict[str, Any]:
        common: dict[str, Any] = {
            "session_id": self.session_id, "transcript_path": self.transcript_path, "cwd": str(self.cwd),
        }  # fmt: skip
        if self.prompt_id is not None:
            common["prompt_id"] = self.prompt_id
        if event not in NO_PERMISSION_MODE:
            common["permission_mode"] = self.permission_mode()
        return {**common, "hook_event_name": event, **fields}

    def fire(self, event: str, fields: dict[str, Any], match: str | None = None) -> Outcome:
        """Run the event's matching hooks (in parallel) and say what they decided; no hooks, no effect."""
        chosen = selected(self.hooks, event, match)
        if not chosen:
            return Outcome()
        text = self._redact(json.dumps(self.payload(event, fields), ensure_ascii=False, default=str))
        diagnostics.debug("Hooks: running %d hook(s) for %s%s", len(chosen), event, f" ({match})" if match else "")
        env = hook_env(self.cwd)
        one = _observed(lambda h: run_command(h, text, self.cwd, env), self.session_id, event, match)
        if len(chosen) == 1:
            runs = [one(chosen[0])]
        else:
            from concurrent.futures import ThreadPoolExecutor  # with logging: only when hooks run together

            with ThreadPoolExecutor(max_workers=min(8, len(chosen))) as pool:
                runs = list(pool.map(one, chosen))
        outcome = interpret(event, runs)
        for line in [*outcome.warnings, *outcome.messages]:
            self.warn(line)
        return outcome

    def fire_later(self, event: str, fields: dict[str, Any], match: str | None = None) -> None:
        """Fire on a thread of its own (events nothing waits on: a teammate spawned or died, a team deleted);
        `drain` waits for them before the process ends."""
        if not selected(self.hooks, event, match):
            return
        thread = threading.Thread(target=self.fire, args=(event, fields, match), name=f"hook-{event}", daemon=True)
        self._later = [t for t in self._later if t.is_alive()] + [thread]
        thread.start()

    def drain(self) -> None:
        for thread in list(self._later):
            thread.join()

    def _redact(self, text: str) -> str:
        """A secret never reaches a hook, even when the model wrote it into a tool's input."""
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text
