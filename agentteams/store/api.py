"""The store interface: what runtimes, tools and commands need of a team's shared state (config and members,
inboxes, tasks, presence, waiting for news), as Protocols plus the value types crossing them. The file store
(`store.files.FileStore`) implements it today; the layout of its files stays behind it."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

from agentteams.pids import LeadProcess
from agentteams.store.fs.atomic_json import now_iso
from agentteams.store.paths import LEAD_NAME
from agentteams.store.records import Envelope, Member, Task, TaskStatus, TeamConfig
from agentteams.store.values import UNSET, BoardTask, ClaimResult, UnassignResult, UpdateResult

if TYPE_CHECKING:  # kept out of start-up: `task list` must not load the protocol module
    from agentteams.errors import CorruptFileError
    from agentteams.store.change_requests import ChangeRequest
    from agentteams.store.leases import TakenBack
    from agentteams.store.node_records import Nodes
    from agentteams.store.presence import Presence
    from agentteams.store.protocol import Message
    from agentteams.store.signing import Keyring

T = TypeVar("T")

__all__ = [
    "MAX_TEXT_CHARS", "UNSET", "Changes", "ClaimResult", "Mail", "NewMember", "Presences", "Store", "Tasks", "Teams",
    "UnassignResult", "UpdateResult", "Waiter", "new_envelope",
]  # fmt: skip

MAX_TEXT_CHARS = 8 * 1024 * 1024  # one message's text, in every store


def new_envelope(sender: str, text: str, *, summary: str | None = None, color: str | None = None) -> Envelope:
    return Envelope(
        sender=sender, text=text, summary=summary, timestamp=now_iso(), color=color, msg_v=1,
        msg_id=str(uuid.uuid4()), type="message", read=False,
    )  # fmt: skip


@dataclass(frozen=True)
class NewMember:
    """What a caller knows about a teammate it is about to add."""

    name: str
    agent_type: str | None = None
    model: str | None = None
    prompt: str | None = None
    color: str | None = None
    plan_mode_required: bool = False
    cwd: str | None = None
    backend_type: str | None = None
    tmux_pane_id: str = ""
    mode: str | None = None
    is_active: bool | None = None  # a lead starting it says True here, before the teammate can say False


class Teams(Protocol):
    """Team configs and their members; every change is atomic against concurrent writers."""

    def canonical(self, team: str) -> str: ...
    def exists(self, team: str) -> bool: ...
    def present(self, team: str) -> bool: ...  # anything of the team is there, even without a readable config
    def create(
        self, team: str, *, description: str | None = None, lead_session_id: str = "",
        lead_model: str | None = None, lead_agent_type: str = LEAD_NAME, cwd: str | None = None,
        lead_pane_id: str = "", lead_backend_type: str | None = None, lead_process: LeadProcess | None = None,
    ) -> TeamConfig: ...  # fmt: skip
    def read(self, team: str) -> TeamConfig: ...
    def peek(self, team: str) -> TeamConfig: ...  # as read, maybe an object shared with other callers: look only
    def list_teams(self) -> list[TeamConfig | CorruptFileError]: ...
    def update(
        self, team: str, change: Callable[[TeamConfig], T], *, write_if: Callable[[T], bool] | None = None
    ) -> T: ...
    # compare-and-set of `leadProcess` on (pid, claimedAt): False when another process claimed the team first
    def claim_lead(self, team: str, lead_process: LeadProcess, *, expected: LeadProcess | None = None) -> bool: ...
    def add_member(self, team: str, new: NewMember) -> Member: ...
    # `new`, or the member already holding its name when `live` says it runs (then False: nothing was added)
    def add_member_once(self, team: str, new: NewMember, live: Callable[[Member], bool]) -> tuple[Member, bool]: ...
    def remove_member(self, team: str, name_or_id: str) -> Member | None: ...
    def depart_member(self, team: str, name: str) -> Member | None: ...  # died: kept aside for a resume
    def return_member(self, team: str, name: str) -> Member | None: ...  # a departed one back, as it was
    def set_member_fields(self, team: str, name_or_id: str, **fields: Any) -> Member: ...
    def set_active(self, team: str, name: str, active: bool) -> Member: ...
    def set_mode(self, team: str, name: str, mode: str) -> Member: ...
    def delete(self, team: str, *, force: bool = False) -> list[str]: ...
    def location(self, team: str) -> str: ...  # where the config lives, as a person would look for it


class Mail(Protocol):
    """One inbox per agent: sends never lose a message; delivery is marked once a model has it."""

    def resolve_recipient(self, config: TeamConfig, to: str) -> str: ...
    def send(
        self, team: str, to: str, text: str, *, sender: str, summary: str | None = None, color: str | None = None
    ) -> Envelope: ...
    def send_message(self, team: str, to: str, message: Message, *, sender: str) -> Envelope: ...
    def broadcast(self, team: str, text: str, *, sender: str, summary: str | None = None) -> list[str]: ...
    def unread(self, team: str, agent: str) -> list[Envelope]: ...
    def read_live(self, team: str, agent: str) -> list[Envelope]: ...  # the inbox without archived history
    def read_all(self, team: str, agent: str) -> list[Envelope]: ...
    def mark_delivered(self, team: str, agent: str, delivered: Iterable[Envelope]) -> int: ...
    def remove_inbox(self, team: str, agent: str) -> None: ...
    def inbox_owner(self, agent: str) -> str: ...  # the key an agent's inbox is stored under
    def inbox_owners(self, team: str) -> list[str]: ...  # every inbox the team has, departed members' too


class Tasks(Protocol):
    """A team's task list: ids never reused, dependencies two-way, claims exclusive."""

    def get(self, team: str, task_id: str) -> Task: ...
    def list_tasks(self, team: str) -> list[Task]: ...
    def board(self, team: str) -> list[BoardTask]: ...  # a view's read: lean, maybe from a checked copy
    def has_list(self, team: str) -> bool: ...  # a task list may outlive its team
    def create(
        self, team: str, subject: str, description: str = "", *, active_form: str | None = None,
        metadata: dict[str, Any] | None = None, blocked_by: Sequence[str] = (),
    ) -> Task: ...  # fmt: skip
    def update(
        self, team: str, task_id: str, *, subject: str | None = None, description: str | None = None,
        active_form: str | None = None, status: TaskStatus | None = None, owner: str | None = UNSET,
        add_blocks: Sequence[str] = (), add_blocked_by: Sequence[str] = (), metadata: dict[str, Any] | None = None,
        assigned_by: str = LEAD_NAME,
    ) -> UpdateResult: ...  # fmt: skip
    def delete(self, team: str, task_id: str) -> Task: ...
    def claim(self, team: str, task_id: str, agent: str, *, check_busy: bool = False) -> ClaimResult: ...
    def claim_next(self, team: str, agent: str, *, check_busy: bool = False) -> ClaimResult: ...
    def unassign_all(self, team: str, agent_name: str, agent_id: str | None = None) -> UnassignResult: ...
    def renew_leases(self, team: str, agent: str) -> None: ...  # an owner of ours, from its heartbeat
    def sweep_leases(self, team: str) -> list[TakenBack]: ...  # tasks whose owner let its lease run out
    # every task, with those a sweep takes back already pending: from one read of the list (what TaskList shows)
    def list_swept(self, team: str) -> tuple[list[Task], list[TakenBack]]: ...
    def check_lease(self, team: str, task: Task, agent: str) -> None: ...  # LeaseLostError for a stale owner


class Presences(Protocol):
    """Our own agents' liveness records (pid, pane, state, usage), for status, cleanup and death checks."""

    def write(self, team: str, agent: str, presence: Presence) -> None: ...
    def read(self, team: str, agent: str) -> Presence | None: ...
    def remove(self, team: str, agent: str) -> None: ...


class Changes(Protocol):
    """`agentteams set` requests for a team's running lead, and its answers (team/lead/live_changes.py takes them)."""

    def submit(self, team: str, agent: str, *, mode: str | None, model: str | None) -> ChangeRequest: ...
    def pending(self, team: str) -> list[ChangeRequest]: ...  # each taken off the queue: answered once
    def answer(self, team: str, request: ChangeRequest, ok: bool, message: str) -> None: ...
    def wait_answer(self, team: str, request: ChangeRequest, timeout: float) -> tuple[bool, str] | None: ...


class Waiter(Protocol):
    """A standing watch on an agent's inbox (and optionally its team's tasks): `wait` returns True on news (a
    readable one of `fds`, such as a pidfd, or a `wake` from another thread, counts as news)."""

    def wait(self, timeout: float | None = None, *, fds: Iterable[int] = ()) -> bool: ...
    def wake(self) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


class Store(Protocol):
    """The shared state of teams, whatever holds it."""

    @property
    def teams(self) -> Teams: ...
    @property
    def mail(self) -> Mail: ...
    @property
    def tasks(self) -> Tasks: ...
    @property
    def presence(self) -> Presences: ...
    @property
    def changes(self) -> Changes: ...
    @property
    def keyring(self) -> Keyring: ...  # this process's signing keys (never stored)
    @property
    def nodes(self) -> Nodes: ...  # machines that run teammates for leads elsewhere (team/nodes*.py)
    def canonical(self, team: str) -> str: ...  # how this store spells a team's name (its key)
    def watch(self, team: str, agent: str, *, tasks: bool = False) -> Waiter: ...
    def watch_teams(self, teams: Sequence[str]) -> Waiter: ...  # any change of these teams (`agentteams watch`)
    def steady(self) -> float: ...  # seconds it has answered since this process last found it away (inf: never)
    def connections(self) -> int: ...  # connections made to it: a server back from a restart is on new ones
