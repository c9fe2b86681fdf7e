"""A session's place among the independent sessions on this machine (agent/peers.py), wired to its lead runtime: what
arrives goes to the runtime (its next tool result, or a turn of its own), turns mark it busy and idle, ListAgents and
SendMessage reach it. Interactive, -p, SDK and background sessions have one; teammates talk through their team."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError

if TYPE_CHECKING:
    from agentteams.agent.loop import AgentEvent
    from agentteams.agent.peers import PeerEndpoint
    from agentteams.team.delivery import TeamEvent
    from agentteams.team.lead.runtime import LeadRuntime

OFF_VAR = "AGENTTEAMS_PEERS"  # "0": this session has no socket and no record (others cannot find or reach it)
PUBLISH_WAIT = 10.0  # seconds a tool or the close waits for the endpoint's start: a socket and a record, or a store's
BG_JOB_VAR = "AGENTTEAMS_BG_JOB"  # set in a background session (run/background.py): its record's kind is "bg"
When = Literal["now", "first_request"]


def session_name(given: str | None, cwd: str, session_id: str) -> str:
    """-n's name, else the folder's name and two hex digits, as claude names an unnamed -p session (`proja-6d`)."""
    if given:
        return given
    base = re.sub(r"[^a-z0-9._-]+", "-", os.path.basename(cwd.rstrip("/")).lower()).strip("-") or "session"
    return f"{base}-{session_id.replace('-', '')[:2]}"


class TurnEnders(list[Callable[[Any], None]]):
    """The runtime's one turn-end callback, calling each of these in turn."""

    def __call__(self, result: Any) -> None:
        for ender in self:
            ender(result)


def start_peers(
    runtime: LeadRuntime, on_team_event: Callable[[TeamEvent], None] | None, turn_enders: TurnEnders,
    when: When = "now", ask_held: Callable[[str, str], bool] | None = None,
) -> PeerStart:  # fmt: skip
    """The session's endpoint, published now or once its first request has left (a -p or SDK session: its modules,
    files, socket and threads then stay off the way to that request; a tool that needs it waits for it)."""
    start = PeerStart(runtime, on_team_event, turn_enders, ask_held)
    if os.environ.get(OFF_VAR) == "0":
        start.off()
    elif when == "now":
        start.run()
    else:
        runtime.ctx.hooks.peers_pending = start.wait

        def first_request(event: AgentEvent) -> None:
            if event.kind == "user":  # emitted once the turn's request has left
                start.go()

        runtime.session.listen(first_request)
    return start


class PeerStart:
    """Publishes a session's endpoint once (`run` here, `go` on a thread of its own) and takes it away (`close`); a
    start still loading its modules when the session closes publishes nothing."""

    def __init__(self, runtime: LeadRuntime, on_team_event: Callable[[TeamEvent], None] | None,
                 turn_enders: TurnEnders, ask_held: Callable[[str, str], bool] | None = None) -> None:  # fmt: skip
        self._runtime, self._on_team_event, self._turn_enders = runtime, on_team_event, turn_enders
        self._ask_held = ask_held  # a REPL's: a held message is put to the person
        self._lock = threading.Lock()
        self._begun = self._closing = self._publishing = False
        self._done = threading.Event()
        self._endpoint: PeerEndpoint | None = None

    def go(self) -> None:
        """Start it on a thread of its own, unless it has begun (or the session is closing)."""
        with self._lock:
            if self._begun or self._closing:
                return
            self._begun = True
        # a daemon: a -p run that ends first does not wait for its modules to load (close publishes nothing then)
        threading.Thread(target=self.run, name="peer-start", daemon=True).start()

    def wait(self) -> None:
        """Until the endpoint is published or refused (a tool's way to it: started now if it has not begun)."""
        self.go()
        if not self._done.wait(PUBLISH_WAIT):  # every wait has a deadline: the tool goes on without the endpoint
            diagnostics.warning("this session's place among other sessions is not ready after %gs", PUBLISH_WAIT)

    def off(self) -> None:
        """This session takes no part: nothing is published, nothing waits."""
        with self._lock:
            self._begun = True
        self._done.set()

    def run(self) -> None:
        with self._lock:
            self._begun = True
        try:
            self._publish()
        finally:
            self._runtime.ctx.hooks.peers_pending = None
            self._done.set()

    def close(self) -> None:
        with self._lock:
            self._closing, publishing, begun = True, self._publishing, self._begun
        if not begun:  # it never will now: a tool waiting for it (`wait`) goes on without it
            self._done.set()
        if publishing:  # being published or done: what it wrote goes away again
            self._done.wait(PUBLISH_WAIT)
        if self._endpoint is not None:
            self._endpoint.close()

    def _publish(self) -> None:
        from agentteams.agent.peer_inbound import SETTING, policy_setting
        from agentteams.agent.peers import PeerEndpoint, PeerWiring
        from agentteams.store.paths import Layout
        from agentteams.team.delivery import TeamEvent

        runtime = self._runtime
        session, on_team_event = runtime.session, self._on_team_event
        options = session.options

        def show(line: str) -> None:
            if on_team_event is not None:
                on_team_event(TeamEvent("notice", "sessions", line))
            else:
                diagnostics.warning("%s", line)

        wiring = PeerWiring(
            mode=lambda: str(runtime.ctx.hooks.permission_mode()),
            policy=lambda: policy_setting(options.settings.merged.get(SETTING)),
            hear=runtime.hear, show=show, ask_held=self._ask_held,
        )  # fmt: skip
        cwd, sid = str(options.cwd), runtime.ctx.session_id
        endpoint = PeerEndpoint(Layout.from_env(), sid, options.cwd, session_name(options.name, cwd, sid), wiring,
                                kind="bg" if os.environ.get(BG_JOB_VAR) else "interactive",
                                entrypoint="cli" if options.interactive else "sdk-cli")  # fmt: skip
        with self._lock:
            if self._closing:
                return
            self._publishing = True
        try:
            endpoint.start()
        except (OSError, AgentTeamsError) as e:  # messaging is an extra: the session runs without it
            diagnostics.warning("other sessions cannot reach this one: %s", e)
            endpoint.close()
            return

        def heard(event: AgentEvent) -> None:
            if event.kind == "user":
                endpoint.busy()

        def ended(result: Any) -> None:
            if runtime.idle:
                endpoint.idle(str(getattr(result, "text", "") or ""))

        session.listen(heard)
        self._turn_enders.append(ended)
        runtime.ctx.hooks.peers = endpoint
        self._endpoint = endpoint
        if not runtime.idle:  # started mid-turn (after its request left): busy until that turn ends
            endpoint.busy()
