"""In-process rigs for the lead and teammate runtimes: the real file store, a FakeModel, a recording spawner,
and the other side of the protocol played by the test (teammates for the lead, the lead for a teammate)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agentteams.agent.prompts import Identity
from agentteams.agent.session import Session, SessionOptions
from agentteams.errors import NotFoundError
from agentteams.store.api import Mail, Tasks, Teams
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs.atomic_json import now_iso
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.protocol import IdleNotification, Message, ShutdownApproved, parse_message
from agentteams.store.records import Member
from agentteams.store.signing import LeadVerifyKey
from agentteams.team.delivery import TeamEvent
from agentteams.team.lead import runtime as lead_module
from agentteams.team.lead.runtime import LeadRuntime
from agentteams.team.spawn.base import Handle, SpawnRequest
from agentteams.team.teammate import runtime as teammate_module
from agentteams.team.teammate.runtime import TeammateRuntime
from tests.support.fake_model import FakeModel
from tests.support.wait import wait_until

TEAM = "proj"
WAIT = 5.0  # seconds any cross-thread condition may take before the test fails (each takes milliseconds)


def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Liveness checks and stop-flag checks every 20 ms instead of every half second."""
    monkeypatch.setattr(lead_module, "CHECK_EVERY", 0.02)
    monkeypatch.setattr(teammate_module, "WAIT_SLICE", 0.02)


class RecordingSpawner:
    """Starts nothing: records spawns and stops; a member is alive until the test `kill`s it."""

    backend = "in-process"
    takes_lead_key = True  # as a real spawner: the lead signs what it writes to every teammate

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.spawned: list[SpawnRequest] = []
        self.stopped: list[str] = []
        self._dead: set[str] = set()

    def spawn(self, req: SpawnRequest) -> Handle:
        with self._lock:
            self.spawned.append(req)
            self._dead.discard(req.name)  # a new process of a name once killed
        return Handle(req.name, "in-process")

    def alive(self, handle: Handle, team: str) -> bool:
        with self._lock:
            return handle.name not in self._dead

    def stop(self, handle: Handle) -> None:
        with self._lock:
            self.stopped.append(handle.name)

    def kill(self, name: str) -> None:
        """The member's process or pane is gone, as the lead's next liveness check will find."""
        with self._lock:
            self._dead.add(name)


class Events:
    """Records the team events a runtime reports; `delay` makes it a UI slow to draw each one."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self._lock = threading.Lock()
        self.items: list[TeamEvent] = []

    def __call__(self, event: TeamEvent) -> None:
        with self._lock:
            self.items.append(event)
        if self.delay:
            time.sleep(self.delay)

    def kinds(self, agent: str) -> list[str]:
        with self._lock:
            return [e.kind for e in self.items if e.agent == agent]


@dataclass
class LeadRig:
    """A started LeadRuntime leading TEAM; the test plays its teammates."""

    runtime: LeadRuntime
    model: FakeModel
    spawner: RecordingSpawner
    layout: Layout
    team: str = TEAM
    mailbox: Mail = field(init=False)
    tasks: Tasks = field(init=False)
    teams: Teams = field(init=False)

    def __post_init__(self) -> None:
        store = self.runtime.store  # the same store the runtime under test uses
        self.mailbox, self.tasks, self.teams = store.mail, store.tasks, store.teams

    def idle(self, name: str, summary: str | None = None) -> None:
        """What a teammate does after each turn: its inbox read, `isActive: false` (while it is a member), then an
        idle notice."""
        self.mailbox.mark_delivered(self.team, name, self.mailbox.unread(self.team, name))
        with contextlib.suppress(NotFoundError):
            self.teams.set_active(self.team, name, False)
        notice = IdleNotification(sender=name, timestamp=now_iso(), summary=summary)
        self.mailbox.send(self.team, LEAD_NAME, notice.to_text(), sender=name)

    def approve_shutdown(self, name: str, *, asked: bool = True) -> None:
        """`name` approves a shutdown: one the lead asked for (as if its model had sent the request), or not."""
        request_id = f"shutdown-1@{name}"
        if asked:
            self.runtime.promises.shutdown_sent(name, request_id)
        approved = ShutdownApproved(request_id=request_id, sender=name, timestamp=now_iso(), backend_type="in-process")
        self.mailbox.send(self.team, LEAD_NAME, approved.to_text(), sender=name)

    def settle(self) -> None:
        """Wait until the lead has read its whole inbox and no turn runs or is due."""
        wait_until(lambda: not self.mailbox.unread(self.team, LEAD_NAME), WAIT, "the lead to read its inbox")
        assert self.runtime.wait_idle(WAIT), "the lead did not go idle"

    def members(self) -> list[str]:
        return [m.name for m in self.teams.read(self.team).members]


@contextmanager
def running_lead(
    layout: Layout, cwd: Path, model: FakeModel, *teammates: str, events: Events | None = None, held: bool = False
) -> Iterator[LeadRig]:
    """A lead session with TEAM and these teammates spawned (recorded, not started), its threads running;
    `held`: as a team file's lead, waiting for its first prompt before any turn."""
    session = Session(SessionOptions(cwd=cwd), model, layout=layout)
    session.store.teams.create(TEAM, lead_session_id=session.options.session_id, cwd=str(cwd))  # AGENTTEAMS_STORE's
    session.ctx.team_name = TEAM  # what TeamCreate does
    spawner = RecordingSpawner()
    runtime = LeadRuntime(session, spawner, on_team_event=events)
    for name in teammates:
        runtime.spawn_teammate({"name": name, "prompt": f"You are {name}."})
    if held:
        runtime.hold_until_first_prompt()
    runtime.start()
    try:
        yield LeadRig(runtime, model, spawner, layout)
    finally:
        runtime.close()
    model.assert_no_failures()


@dataclass
class TeammateRig:
    """A TeammateRuntime for `name` in TEAM; the test plays its lead."""

    runtime: TeammateRuntime
    model: FakeModel
    layout: Layout
    name: str
    team: str = TEAM
    mailbox: Mail = field(init=False)
    tasks: Tasks = field(init=False)
    teams: Teams = field(init=False)
    errors: list[BaseException] = field(default_factory=list)
    thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        store = self.runtime.store  # the same store the runtime under test uses
        self.mailbox, self.tasks, self.teams = store.mail, store.tasks, store.teams

    def start(self) -> None:
        """`run()` in a thread of its own, as the in-process spawner runs it."""

        def serve() -> None:
            try:
                self.runtime.run()
            except BaseException as e:  # reported by `running_teammate`
                self.errors.append(e)

        self.thread = threading.Thread(target=serve, name=f"teammate-{self.name}", daemon=True)
        self.thread.start()

    def from_lead(self, text: str) -> None:
        self.mailbox.send(self.team, self.name, text, sender=LEAD_NAME)

    def to_lead(self) -> list[Message]:
        """The protocol messages the teammate has sent its lead, oldest first."""
        parsed = [parse_message(e.text) for e in self.mailbox.read_live(self.team, LEAD_NAME)]
        return [m for m in parsed if isinstance(m, Message)]

    def member(self) -> Member:
        member = self.teams.read(self.team).member(self.name)
        assert member is not None, f"{self.name} is not in the team"
        return member

    def turns_done(self) -> int:
        """Turns finished: each ends with an idle notice to the lead."""
        return sum(isinstance(m, IdleNotification) for m in self.to_lead())

    def wait_turns(self, count: int) -> None:
        wait_until(lambda: self.turns_done() >= count, WAIT, f"{self.name} to finish turn {count}")


@contextmanager
def running_teammate(rig: TeammateRig) -> Iterator[TeammateRig]:
    """Start the rig's `run()`; on exit set its stop flag, join it, and fail on any error or stray model call."""
    rig.start()
    try:
        yield rig
    finally:
        rig.runtime.stop.set()
        if rig.thread is not None:
            rig.thread.join(WAIT)
    assert rig.thread is not None and not rig.thread.is_alive(), "the teammate did not stop"
    assert not rig.errors, rig.errors
    rig.model.assert_no_failures()


def teammate_rig(
    layout: Layout, cwd: Path, model: FakeModel, name: str = "alice", *, permission_mode: str = "default",
    plan_mode_required: bool = False, permission_timeout: float = teammate_module.PERMISSION_TIMEOUT,
    peers: tuple[str, ...] = (), lead_key: LeadVerifyKey | None = None,
) -> TeammateRig:  # fmt: skip
    """TEAM with `name` (and `peers`) registered as the lead's spawn would, and `name`'s runtime (not started)."""
    teams = TeamStore(layout)
    teams.create(TEAM, cwd=str(cwd))
    member = teams.add_member(TEAM, NewMember(name=name, plan_mode_required=plan_mode_required, cwd=str(cwd)))
    for peer in peers:
        teams.add_member(TEAM, NewMember(name=peer, cwd=str(cwd)))
    options = SessionOptions(
        cwd=cwd, permission_mode=permission_mode, team_role="teammate", plan_mode_required=plan_mode_required,
        interactive=True, identity=Identity(name, TEAM, color=member.color),
    )  # fmt: skip
    runtime = TeammateRuntime(
        options, model, layout=layout, backend="in-process", permission_timeout=permission_timeout, lead_key=lead_key
    )
    return TeammateRig(runtime, model, layout, name)
