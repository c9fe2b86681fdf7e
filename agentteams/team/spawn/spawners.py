"""The spawners: tmux panes (a process each, `agentteams --agent-id ...` or `--teammate-command` in its own pane) or
in-process threads; each says whether a teammate it started still runs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentteams import diagnostics
from agentteams.agent.loop import AgentEvent
from agentteams.agent.prompts import Identity
from agentteams.agent.session import SessionOptions
from agentteams.errors import AgentTeamsError
from agentteams.model.types import ModelClient
from agentteams.pids import pid_alive, proc_start
from agentteams.store.api import Store
from agentteams.store.paths import Layout
from agentteams.team.delivery import TeamEvent
from agentteams.team.spawn.version_probe import VersionProbe

if TYPE_CHECKING:
    pass

from agentteams.team.spawn.base import Backend, Handle, SpawnRequest, own_executable, teammate_argv, teammate_env


class TmuxSpawner:
    """Each teammate a process in its own pane beside the lead (or in the swarm session outside tmux)."""

    backend: Backend = "tmux"

    def __init__(
        self, store: Store, *, socket_path: str | None = None, command: list[str] | None = None,
        extra_env: Callable[[], dict[str, str]] | None = None, launcher: list[str] | None = None,
    ) -> None:  # fmt: skip
        from agentteams.backends.tmux import TmuxBackend, current_pane, enclosing_server

        self.store = store
        self.tmux = TmuxBackend(socket_path or enclosing_server())  # inside tmux: the lead's own server
        self.command = command or own_executable()
        self.extra_env, self.launcher = extra_env or dict, launcher or []  # launcher: cli/panelaunch, see spawn
        self.target_pane = current_pane()
        self._version = VersionProbe(self.command, ours=self.command == own_executable())

    @property
    def takes_lead_key(self) -> bool:
        """Whether the teammate program accepts `--lead-verify-key`: ours does, a real `claude` from 2.1.330."""
        return self._version.takes_lead_key()

    @property
    def runs_ours(self) -> bool:
        """Whether its teammates are agentteams rather than a real `claude` (`--teammate-command`)."""
        return self._version.is_ours()

    def spawn(self, req: SpawnRequest) -> Handle:
        served = self.extra_env()  # a fork server's: the pane runs the lean launcher that reaches it
        argv, env = [*(self.launcher if served else []), *teammate_argv(req, self.command)], teammate_env(served, req)
        pane, pid = self.tmux.spawn_pane_process(
            self.target_pane, req.name, req.color, argv, req.cwd, env, tag=req.agent_id
        )
        return Handle(req.name, "tmux", pane_id=pane, pane_pid=pid, pane_started=proc_start(pid) if pid else None)

    def alive(self, handle: Handle, team: str) -> bool:
        # the lead asks this of every teammate twice a second: a tmux client (or even a presence file) per teammate
        # cost a 16-member team's idle lead ~3 % of a core. The pane's process is the teammate, or the launcher
        # that relays a forked teammate's exit (cli/launch.py), or the shell a real `claude` runs under: its end
        # is the teammate's end, and /proc says so at next to no cost.
        if handle.pane_pid is not None and handle.pane_started is not None:
            return pid_alive(handle.pane_pid) and proc_start(handle.pane_pid) == handle.pane_started
        if not self.tmux.pane_alive(handle.pane_id):
            return False
        presence = self.store.presence.read(team, handle.name)
        if presence is None or presence.pane_id not in ("", handle.pane_id):
            return True  # none yet, or an earlier member's of that name (its last "exited" may land after it left)
        return presence.liveness() not in ("exited", "dead")  # a stopped one is still there

    def stop(self, handle: Handle) -> None:
        self.tmux.kill_pane(handle.pane_id)

    def focus(self, handle: Handle) -> None:
        self.tmux.select_pane(handle.pane_id, zoom=False)


class InProcessSpawner:
    """Each teammate a thread of the lead's process: same files, same protocol, one model client."""

    backend: Backend = "in-process"
    takes_lead_key = True  # handed over in memory

    def __init__(
        self, layout: Layout, client: ModelClient, *, store: Store | None = None, secrets: tuple[str | None, ...] = (),
        on_event: Callable[[str, AgentEvent], None] | None = None,
        on_team_event: Callable[[TeamEvent], None] | None = None,
    ) -> None:  # fmt: skip
        self.layout = layout  # each teammate's own files (transcripts, plans)
        self.store = store
        self.client = client
        self.secrets = secrets
        self.on_event = on_event or (lambda _n, _e: None)
        self.on_team_event = on_team_event

    @staticmethod
    def options_for(req: SpawnRequest, layout: Layout | None = None) -> SessionOptions:
        """The teammate's session options: what the request says, the lead's settings included (and, for a
        relaunch, the conversation it goes on with, found under `layout`)."""
        from agentteams.store.transcripts.reader import find, load

        found = find(layout, req.cwd, req.resume) if req.resume and layout is not None else None
        return SessionOptions(
            cwd=req.cwd, model=req.model, permission_mode=req.permission_mode, allowed_tools=req.allowed_tools,
            disallowed_tools=req.disallowed_tools, team_role="teammate", plan_mode_required=req.plan_mode_required,
            interactive=True,  # a teammate can always ask: its questions go to the lead
            identity=Identity(req.name, req.team, agent_type=req.agent_type, color=req.color), settings=req.settings,
            resume=load(found) if found is not None else None,
            mcp=req.mcp,  # its own connections: each teammate starts the servers itself
            restricted=req.restricted,
        )  # fmt: skip

    def spawn(self, req: SpawnRequest) -> Handle:
        from agentteams.team.teammate.runtime import TeammateRuntime

        handle = Handle(req.name, "in-process")
        options = self.options_for(req, self.layout)
        runtime = TeammateRuntime(
            options, self.client, layout=self.layout, store=self.store, backend="in-process", stop=handle.stop,
            on_event=lambda e: self.on_event(req.name, e), on_team_event=self.on_team_event, secrets=self.secrets,
            lead_key=req.lead_key,
        )  # fmt: skip

        def serve() -> None:
            try:
                runtime.run()
            except Exception as e:  # a crashed teammate thread is a dead teammate, not a dead lead
                diagnostics.warning("teammate %s stopped: %s: %s", req.name, type(e).__name__, e)

        if req.fork is not None and options.identity is not None:  # before its first turn: it starts from its lead's
            req.fork.adopt(runtime.session.agent, options.identity)
        handle.interrupt = runtime.ctx.interrupt
        handle.thread = threading.Thread(target=serve, name=f"teammate-{req.name}", daemon=True)
        handle.thread.start()
        return handle

    def alive(self, handle: Handle, team: str) -> bool:
        return handle.thread is not None and handle.thread.is_alive()

    def stop(self, handle: Handle) -> None:
        handle.stop.set()
        if handle.interrupt is not None:
            handle.interrupt.set()
        if handle.thread is not None and handle.thread is not threading.current_thread():
            handle.thread.join(timeout=5)

    def focus(self, handle: Handle) -> None:
        raise AgentTeamsError(f"{handle.name} runs inside the lead's process: it has no pane to focus")
