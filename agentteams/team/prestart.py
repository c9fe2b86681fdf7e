"""`PrestartingSpawner`: tmux teammates started before their panes (by the lead's fork server), so making the pane
and starting its launcher (~20-40 ms) run beside the teammate's way to its first request instead of before it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from agentteams.pids import proc_start
from agentteams.store.api import Store
from agentteams.team.spawning import Handle, SpawnRequest, TmuxSpawner, teammate_argv, teammate_env


class Prestarted(Protocol):
    """A running teammate waiting for its pane: `env` points the pane's launcher at it, `prefix` goes before the
    launcher's command line; `cancel` ends it."""

    env: dict[str, str]
    prefix: list[str]

    def cancel(self) -> None: ...


Prestart = Callable[[list[str], dict[str, str], Path], Prestarted | None]  # argv, env, cwd -> started, or None


class PrestartingSpawner(TmuxSpawner):
    """A `TmuxSpawner` that has the teammate started first, then makes its pane, whose launcher attaches to it.
    When it cannot start one early, the pane starts it as a plain `TmuxSpawner` does."""

    def __init__(
        self, store: Store, prestart: Prestart, *, extra_env: Callable[[], dict[str, str]], launcher: list[str]
    ) -> None:
        super().__init__(store, extra_env=extra_env, launcher=launcher)
        self.prestart = prestart

    def spawn(self, req: SpawnRequest) -> Handle:
        served = self.extra_env()
        own, env = teammate_argv(req, self.command), teammate_env(served)
        started = self.prestart(own, env, req.cwd) if served else None
        if started is None:
            return super().spawn(req)
        try:
            pane, pid = self.tmux.spawn_pane_process(
                self.target_pane, req.name, req.color, [*started.prefix, *self.launcher, *own], req.cwd,
                {**env, **started.env},
                tag=req.agent_id,
            )  # fmt: skip
        except BaseException:
            started.cancel()
            raise
        return Handle(req.name, "tmux", pane_id=pane, pane_pid=pid, pane_started=proc_start(pid) if pid else None)
