"""`PrestartingSpawner`: tmux teammates started before their panes (by the lead's fork server), the pane made once the
teammate's first request is out: making it and starting its launcher (~20-40 ms) are then off that path altogether."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from agentteams.pids import proc_start
from agentteams.store.api import Store
from agentteams.team.spawn.base import Handle, SpawnRequest, teammate_argv, teammate_env
from agentteams.team.spawn.spawners import TmuxSpawner


class Prestarted(Protocol):
    """A running teammate waiting for its pane: `env` points the pane's launcher at it, `prefix` goes before the
    launcher's command line; `cancel` ends it."""

    env: dict[str, str]
    prefix: list[str]

    def await_request(self, timeout: float) -> None: ...
    def cancel(self) -> None: ...


# a teammate's way to its first request is ~10 ms of CPU alone; two cores shared with the pane's making and the
# lead's own next request made it ~25 (bench_team's spawn case): the pane comes once it is out, or after this
FIRST_REQUEST_WAIT = 0.15
Prestart = Callable[[list[str], dict[str, str], Path], Prestarted | None]  # argv, env, cwd -> started, or None


class PrestartingSpawner(TmuxSpawner):
    """A `TmuxSpawner` that has the teammate started first, waits for its first request to be out (FIRST_REQUEST_WAIT
    at most), then makes its pane, whose launcher attaches to it. When it cannot start one early, the pane starts it
    as a plain `TmuxSpawner` does."""

    def __init__(
        self, store: Store, prestart: Prestart, *, extra_env: Callable[[], dict[str, str]], launcher: list[str]
    ) -> None:
        super().__init__(store, extra_env=extra_env, launcher=launcher)
        self.prestart = prestart

    def spawn(self, req: SpawnRequest) -> Handle:
        served = self.extra_env()
        own, env = teammate_argv(req, self.command), teammate_env(served, req)
        started = self.prestart(own, env, req.cwd) if served else None
        if started is None:
            return super().spawn(req)
        try:
            started.await_request(FIRST_REQUEST_WAIT)
            pane, pid = self.tmux.spawn_pane_process(
                self.target_pane, req.name, req.color, [*started.prefix, *self.launcher, *own], req.cwd,
                {**env, **started.env},
                tag=req.agent_id,
            )  # fmt: skip
        except BaseException:
            started.cancel()
            raise
        return Handle(req.name, "tmux", pane_id=pane, pane_pid=pid, pane_started=proc_start(pid) if pid else None)
