"""Claude Code's spawn caps (2.1.332, observed offline): how many subagents run at once and how deep they nest, each
set by its environment variable, with the refusals its Agent tool returns; the answer's order in which calls run side
by side take their slots; and whether `subagent_type: "fork"` is on."""

# What 2.1.332 does, and ours with it: CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS (default 20) counts the subagents running
# in a session (background, foreground or forked, at every depth; not teammates); CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH
# (default 3) keeps the Agent tool from a subagent at that depth and refuses a spawn from there (a fork keeps its
# caller's tools, so it meets the refusal); a value that is not a whole number >= 1 leaves the default.
# CLAUDE_CODE_MAX_SUBAGENTS_PER_SESSION is a name 2.1.332 knows but does not act on: no per-session cap here either.

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

CONCURRENT_VAR = "CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS"
DEPTH_VAR = "CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH"
FORK_VAR = "CLAUDE_CODE_FORK_SUBAGENT"
DEFAULT_CONCURRENT = 20
DEFAULT_DEPTH = 3
FORK_TYPE = "fork"  # the subagent type that starts from the caller's conversation
_WHOLE = re.compile(r"[+-]?\d+")
_OFF = frozenset({"0", "false", "no", "off"})

# the refusals, word for word as claude's Agent tool returns them (is_error results), so a model, a hook or a script
# reading them meets the same text under either CLI
FORK_IN_FORK = "Fork is not available inside a forked worker. Complete your task directly using your tools."


def concurrency_refusal(limit: int) -> str:
    return (f"Concurrent subagent limit reached. You can run {limit} subagents at once. Do not retry. If the user "
            f"wants more concurrent subagents, ask them to increase {CONCURRENT_VAR}.")  # fmt: skip


def depth_refusal(depth: int, limit: int) -> str:
    return (f"Subagent nesting limit reached (depth {depth} of {limit}). Complete this task directly using your "
            "tools instead of spawning another agent. If the user explicitly requested deeper nesting, ask them to "
            f"raise {DEPTH_VAR}.")  # fmt: skip


def whole_at_least_one(value: str | None, default: int) -> int:
    """claude's reading of these variables: blanks around it ignored, a signed whole number >= 1, else `default`."""
    text = (value or "").strip()
    if not _WHOLE.fullmatch(text) or int(text) < 1:
        return default
    return int(text)


@dataclass(frozen=True)
class SpawnLimits:
    concurrent: int = DEFAULT_CONCURRENT
    depth: int = DEFAULT_DEPTH
    fork: bool = True  # `subagent_type: "fork"` offered (claude's default; CLAUDE_CODE_FORK_SUBAGENT=0 turns it off)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SpawnLimits:
        return cls(
            concurrent=whole_at_least_one(env.get(CONCURRENT_VAR), DEFAULT_CONCURRENT),
            depth=whole_at_least_one(env.get(DEPTH_VAR), DEFAULT_DEPTH),
            fork=(env.get(FORK_VAR) or "").strip().lower() not in _OFF,
        )

    def may_nest(self, depth: int) -> bool:
        """Does an agent at `depth` (the main agent is 0) get the tool that spawns subagents?"""
        return depth < self.depth


class RunningSubagents:
    """The subagents running now in one session: `take` refuses past the cap, else holds a slot until released."""

    def __init__(self, limits: SpawnLimits) -> None:
        self.limits = limits
        self._count = 0
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        with self._lock:
            return self._count

    def take(self) -> Callable[[], None] | str:
        """A release callable (idempotent), or claude's refusal when the cap is reached. A call of a batch run side
        by side (StartOrder) takes its slot only once the batch's earlier calls have taken theirs or ended."""
        ticket = _ticket.__dict__.pop("held", None)  # one-shot: a subagent's own calls in this thread take freely
        if ticket is not None:
            ticket[0].wait(ticket[1])
        try:
            return self._take()
        finally:
            if ticket is not None:
                ticket[0].passed(ticket[1])

    def _take(self) -> Callable[[], None] | str:
        with self._lock:
            if self._count >= self.limits.concurrent:
                return concurrency_refusal(self.limits.concurrent)
            self._count += 1
        held = [True]

        def release() -> None:
            with self._lock:
                if held[0]:
                    held[0] = False
                    self._count -= 1

        return release


_ticket = threading.local()  # `held`: (the StartOrder, this call's place) for the batch call running in this thread


class StartOrder:
    """The subagent calls of one answer, run side by side, take their slots in the answer's order, as claude 2.1.332's
    do (of three under a cap of 2 the third is refused), whichever thread gets there first. A call passes its place
    when it takes its slot (or is refused), or when it ends without taking one (a hook or a rule refused it)."""

    def __init__(self) -> None:
        self._next = 0  # every place before it has passed
        self._passed: set[int] = set()
        self._cond = threading.Condition()

    @contextlib.contextmanager
    def place(self, index: int) -> Iterator[None]:
        """Run one call of the batch (in its own thread) at place `index`."""
        _ticket.held = (self, index)
        try:
            yield
        finally:
            _ticket.__dict__.pop("held", None)
            self.passed(index)

    def wait(self, index: int) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._next >= index)

    def passed(self, index: int) -> None:
        with self._cond:
            self._passed.add(index)
            while self._next in self._passed:
                self._next += 1
            self._cond.notify_all()
