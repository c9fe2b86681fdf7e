"""A view of teams for `status`, `watch`, `attach` and `logs`: members' liveness and state, the task
board, the messages between agents, and where an agent's transcript is. Built from the team's files and one
listing of the tmux server's panes."""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentteams.backends.tmux import PaneRecord, probe_panes
from agentteams.errors import AgentTeamsError, CorruptFileError, NotFoundError, UnsafePathError
from agentteams.store.api import Store
from agentteams.store.fs import safe_paths
from agentteams.store.paths import LEAD_NAME, Layout, team_dir_name
from agentteams.store.presence import Presence
from agentteams.store.records import Envelope, Member, TeamConfig
from agentteams.store.task_text import task_line
from agentteams.store.values import BoardTask
from agentteams.team.budget_limit import Budget
from agentteams.team.nodes.view import node_state
from agentteams.team.teammate.lead_watch import lead_gone

if TYPE_CHECKING:
    from agentteams.store.protocol import Message  # imported when a message is one (16 classes: ~10 ms of `status`)

LABEL_CHARS = 100


class PaneTable:
    """Every pane of one tmux server, listed with one command; `panes` is None when no server answers."""

    def __init__(self, panes: dict[str, PaneRecord] | None) -> None:
        self.panes = panes

    @classmethod
    def probe(cls, socket_path: str | None = None) -> PaneTable:
        """The panes of AGENTTEAMS_TMUX_SOCKET's server, else of the one we run in, else of the default one (no
        tmux binary, no server: liveness by pane is then unknown, not an error)."""
        return cls(probe_panes(socket_path))

    def hosts(self, config: TeamConfig) -> bool:
        """Whether this is the server the team's panes live on (pane ids are only unique per server)."""
        if self.panes is None:
            return False
        lead = config.member(config.lead_agent_id)
        if lead is not None and lead.tmux_pane_id and lead.tmux_pane_id in self.panes:
            return True
        return any(p.tag.endswith(f"@{config.name}") for p in self.panes.values())

    def alive(self, pane_id: str, agent_id: str, hosts_team: bool) -> bool | None:
        """True/False when this server can tell; None when it cannot (no server, or another server's pane)."""
        if self.panes is None:
            return None
        info = self.panes.get(pane_id)
        if info is None:
            return False if hosts_team else None
        if info.tag and info.tag != agent_id:
            return None  # the same id names another agent's pane here: the team runs on another server
        return not info.dead


@dataclass
class MemberView:
    name: str
    agent_id: str
    color: str | None
    role: str
    backend: str | None
    pane: str | None
    state: str  # starting, working, idle, awaiting_plan_approval, stopping, unresponsive, gone, dead, unknown
    is_lead: bool
    pid: int | None = None
    session_id: str | None = None
    current_task: str | None = None
    last_message: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    context_percent: int | None = None  # how full its conversation is, of its model's window
    busy_since: int | None = None  # epoch ms its current turn began (None: not in a turn, or not known)
    current_tool: str | None = None
    budget_tokens: int | None = None  # its budget (team/budget.py), and how much of it is spent
    budget_usd: float | None = None
    budget_percent: int | None = None
    node: str | None = None  # the node it runs on (`agentteams node`); None: the lead's machine


TaskView = BoardTask  # a task as a view shows it; its line (`#2 [pending] Write tests`) is TeamView.line's


@dataclass
class FeedItem:
    """One message between agents, as a one-line label."""

    team: str
    timestamp: str
    sender: str
    recipient: str
    kind: str  # "message" for plain text, else the protocol message's type
    label: str
    color: str | None
    key: str = field(default="", repr=False)  # recipient + the message's identity: each message once


@dataclass
class TeamView:
    name: str
    description: str | None
    lead: str
    panes_known: bool  # False when no tmux server could be asked about the team's panes
    members: list[MemberView]
    tasks: list[TaskView]
    lead_gone: bool = False  # its lead died: the teammates wait for `agentteams -c` (a grace period)
    worktrees: list[str] = field(default_factory=list)  # `status` only: each teammate branch's state (git asked)

    def to_json(self) -> dict[str, Any]:
        """Every task with its line, whatever the board's size."""
        out = asdict(replace(self, tasks=[]))
        out["tasks"] = [{**t._asdict(), "line": self.line(t)} for t in self.tasks]
        return out

    def task(self, task_id: str | None) -> TaskView | None:
        return self._by_id.get(task_id or "")

    def line(self, task: TaskView) -> str:
        """claude's TaskList line of `task`, showing only the blockers still open on this board. Made when shown: a
        summary of 10 000 tasks shows a few hundred."""
        return task_line(task, self._open_ids)

    @functools.cached_property
    def _by_id(self) -> dict[str, TaskView]:
        return {t.id: t for t in self.tasks}

    @functools.cached_property
    def _open_ids(self) -> set[str]:
        return {t.id for t in self.tasks if t.status not in ("completed", "deleted")}  # BoardTask.resolved, inline


# -- messages -----------------------------------------------------------------------------------------


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    line = " ".join(lines[0].split()) if lines else ""
    return line if len(line) <= LABEL_CHARS else line[: LABEL_CHARS - 1] + "…"


def protocol_label(msg: Message) -> str:
    """A protocol message as a few words: `idle`, `shutdown request`, `task #2 assigned: Write tests`."""
    from agentteams.store.protocol import (
        IdleNotification,
        PermissionRequest,
        PermissionResponse,
        PlanApprovalResponse,
        ShutdownRejected,
        TaskAssignment,
        TaskCompleted,
    )

    if isinstance(msg, IdleNotification):
        parts = [f"completed #{msg.completed_task_id}" if msg.completed_task_id else "", msg.summary or ""]
        parts.append(f"failed: {msg.failure_reason}" if msg.failure_reason else "")
        details = ", ".join(p for p in parts if p)
        return f"idle ({details})" if details else "idle"
    if isinstance(msg, TaskAssignment):
        return f"task #{msg.task_id} assigned: {msg.subject}"
    if isinstance(msg, TaskCompleted):
        return f"task #{msg.task_id} completed"
    if isinstance(msg, ShutdownRejected):
        return f"shutdown rejected: {msg.reason}"
    if isinstance(msg, PlanApprovalResponse):
        return "plan approved" if msg.approved else f"plan rejected: {msg.feedback or ''}".rstrip(": ")
    if isinstance(msg, PermissionRequest):
        return f"permission request: {msg.tool_name}"
    if isinstance(msg, PermissionResponse):
        return "permission granted" if msg.subtype == "success" else "permission denied"
    return str(msg.to_json().get("type") or "message").replace("_", " ")


def message_label(env: Envelope, recipient: str, lead: str) -> tuple[str, str]:
    """(kind, label) of one message; a peer DM reads `[to bob] <summary>` as in idle notices."""
    msg = None
    if env.text.lstrip().startswith("{"):  # only such text can be a protocol message (protocol.parse_message)
        from agentteams.store.protocol import parse_message

        msg = parse_message(env.text)
    if msg is not None:
        return str(msg.to_json().get("type") or "unknown"), _first_line(protocol_label(msg))
    about = _first_line(env.summary or env.text)
    if lead not in (env.sender, recipient):
        about = f"[to {recipient}] {about}"
    return "message", about


def load_feed(store: Store, config: TeamConfig) -> list[FeedItem]:
    """Every message in the team's inboxes and histories (departed members' too), oldest first."""
    items: list[FeedItem] = []
    for owner in store.mail.inbox_owners(config.name):
        recipient = next((m.name for m in config.members if store.mail.inbox_owner(m.name) == owner), owner)
        try:
            envs = store.mail.read_all(config.name, owner)
        except AgentTeamsError:  # an inbox being replaced or corrupt says nothing we could show
            continue
        for env in envs:
            kind, label = message_label(env, recipient, config.lead_name)
            key = "\x1f".join((recipient, *env.identity))
            items.append(FeedItem(config.name, env.timestamp, env.sender, recipient, kind, label, env.color, key))
    items.sort(key=lambda i: i.timestamp)
    return items


# -- members ------------------------------------------------------------------------------------------


def _state(member: Member, presence: Presence | None, pane_alive: bool | None) -> str:
    if presence is not None:  # one of ours: its own report, unless it has exited, died or stopped beating
        life = presence.liveness()
        if life == "exited":
            return "gone"
        if life == "dead" or pane_alive is False:
            return "dead"
        return "unresponsive" if life == "unresponsive" else presence.state
    if pane_alive is False:
        return "dead"
    # e.g. a real Claude Code teammate: it sets isActive itself while working
    if member.is_active is None:
        return "unknown"
    return "working" if member.is_active else "idle"


def _role(member: Member, is_lead: bool) -> str:
    if member.agent_type and member.agent_type not in (LEAD_NAME, "general-purpose"):
        return member.agent_type
    return "lead" if is_lead else "teammate"


def member_view(
    store: Store, config: TeamConfig, member: Member, panes: PaneTable, working: dict[str, tuple[int, str]],
    feed: list[FeedItem],
) -> MemberView:  # fmt: skip
    """`working`: each owner's first task in progress (its place on the board, its id)."""
    presence = store.presence.read(config.name, member.name)
    pane = (presence.pane_id if presence else "") or member.tmux_pane_id or None
    alive = panes.alive(pane, member.agent_id, panes.hosts(config)) if pane else None
    is_lead = member.agent_id == config.lead_agent_id
    view = MemberView(
        name=member.name, agent_id=member.agent_id, color=member.color, role=_role(member, is_lead),
        backend=(presence.backend if presence else None) or member.backend_type, pane=pane,
        state=node_state(store, member, presence) or _state(member, presence, alive), is_lead=is_lead,
        node=member.node,
    )  # fmt: skip
    if presence is not None:
        view.pid, view.session_id = presence.pid, presence.session_id
        view.input_tokens, view.output_tokens, view.cost_usd = (
            presence.input_tokens, presence.output_tokens, presence.cost_usd
        )  # fmt: skip
        view.current_task, view.last_message = presence.current_task, presence.last_message
        if presence.context_window > 0:
            view.context_percent = min(100, round(100 * presence.context_tokens / presence.context_window))
        view.busy_since, view.current_tool = presence.busy_since or None, presence.current_tool
    elif is_lead:
        view.session_id = config.lead_session_id or None
    view.budget_tokens, view.budget_usd = member.budget_tokens, member.budget_usd
    spent = ((view.input_tokens or 0) + (view.output_tokens or 0), view.cost_usd or 0.0)
    view.budget_percent = Budget(member.budget_tokens, member.budget_usd).percent(*spent)
    if view.current_task is None:
        owned = [working[k] for k in (member.name, member.agent_id) if k in working]
        view.current_task = min(owned)[1] if owned else None  # the lowest place: tasks come in id order
    if view.last_message is None:
        sent = [f for f in feed if f.sender == member.name]
        pick = [f for f in sent if f.kind == "message"] or sent  # plain words say more than an idle notice
        view.last_message = pick[-1].label if pick else None
    return view


def task_views(store: Store, team: str) -> list[TaskView]:
    return store.tasks.board(team)  # no record per task: on a board of 10 000 their building was most of the time


def _working(tasks: list[TaskView]) -> dict[str, tuple[int, str]]:
    """Each owner's first task in progress: one pass over the board, not one per member."""
    working: dict[str, tuple[int, str]] = {}
    for i, t in enumerate(tasks):
        if t.status == "in_progress" and t.owner and t.owner not in working:
            working[t.owner] = (i, t.id)
    return working


def build_view(store: Store, config: TeamConfig, panes: PaneTable, feed: list[FeedItem] | None = None) -> TeamView:
    tasks = task_views(store, config.name)
    feed = load_feed(store, config) if feed is None else feed
    working = _working(tasks)
    members = [member_view(store, config, m, panes, working, feed) for m in config.members]
    known = panes.panes is not None
    gone = lead_gone(store, config.name, config)
    return TeamView(config.name, config.description, config.lead_name, known, members, tasks, gone)


def read_configs(store: Store, team: str | None) -> list[TeamConfig | CorruptFileError]:
    """One team (NotFoundError when it does not exist), or every team with unreadable ones as their errors."""
    if team is not None:
        return [store.teams.read(team)]
    return store.teams.list_teams()


def find_member(config: TeamConfig, agent: str) -> Member:
    member = config.member(agent) or (config.member(config.lead_agent_id) if agent == "lead" else None)
    if member is None:
        raise NotFoundError(f"team {config.name!r} has no member {agent!r} (members: {_names(config)})")
    return member


# -- transcripts --------------------------------------------------------------------------------------


def _iso(ms: int | float) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


HEAD_LINES = 16  # Claude Code opens a transcript with a few bookkeeping entries before its first message


def _first_entry(path: Path) -> dict[str, Any]:
    """The first entry naming its agent, as ours name it (`agent`, `team`): ours begin with one; Claude Code names
    the agent and team in each message entry (`agentName`, `teamName`), after a few bookkeeping lines."""
    with contextlib.suppress(OSError, ValueError, UnsafePathError), safe_paths.open_file(path, "rb") as f:
        for line in itertools.islice(f, HEAD_LINES):
            entry = json.loads(line)
            if not isinstance(entry, dict):
                continue
            if "agent" in entry:
                return entry
            if isinstance(entry.get("agentName"), str):
                named = {"team": entry["teamName"]} if isinstance(entry.get("teamName"), str) else {}
                return {"agent": entry["agentName"], "timestamp": entry.get("timestamp", ""), **named}
    return {}


@dataclass
class TranscriptHit:
    path: Path
    exact: bool  # False: chosen by name and time alone (the team is gone and the entries do not name it)


def _candidates(layout: Layout, agent: str, team: str, cwd: str | None) -> list[tuple[str, Path, bool]]:
    """(first timestamp, file, names the team) of transcripts that begin with `agent`, oldest first; in the cwd's
    project dir when that has any. A transcript that names another team is left out."""
    dirs = [layout.transcript_file(cwd, "any").parent] if cwd else []  # the cwd's project dir
    for group in (dirs, sorted(layout.projects_dir.glob("*"))):
        found = []
        for path in (p for d in group for p in sorted(d.glob("*.jsonl"))):
            entry = _first_entry(path)
            if entry.get("agent") == agent and entry.get("team", team) == team:
                found.append((str(entry.get("timestamp", "")), path, "team" in entry))
        if found:
            named = [c for c in found if c[2]]
            return sorted(named or found)
    return []


def find_transcript(layout: Layout, store: Store, team: str, agent: str) -> TranscriptHit:
    """An agent's transcript: by its session id while it runs (or the lead's), else by a scan of the transcripts,
    which also finds a teammate that has exited, even once its team is deleted."""
    config = None
    with contextlib.suppress(NotFoundError):
        config = store.teams.read(team)
    if config is None:
        found = _candidates(layout, LEAD_NAME if agent == "lead" else agent, team_dir_name(team), None)
        if not found:
            raise NotFoundError(f"no team named {team!r}, and no transcript of {agent!r} in it was found")
        return TranscriptHit(found[-1][1], exact=found[-1][2])
    name = config.lead_name if agent == "lead" else agent
    member, lead = config.member(name), config.member(config.lead_agent_id)
    cwd = (member.cwd if member else None) or (lead.cwd if lead else None)
    presence = store.presence.read(config.name, name)
    is_lead = member is not None and member is lead
    session = presence.session_id if presence else (config.lead_session_id if is_lead else None)
    if session and cwd and (path := layout.transcript_file(cwd, session)).exists():
        return TranscriptHit(path, exact=True)
    since = _iso(member.joined_at if member else config.created_at)  # only sessions begun since it joined
    found = [c for c in _candidates(layout, name, config.name, cwd) if c[0] >= since or c[2]]
    if not found:
        known = "" if member else f"; the team has no member {name!r} (members: {_names(config)})"
        raise NotFoundError(f"no transcript of {name!r} in team {config.name!r} was found{known}")
    pick = found[0] if member is not None else found[-1]  # a member: the first session after it joined
    return TranscriptHit(pick[1], exact=True)


def _names(config: TeamConfig) -> str:
    return ", ".join(m.name for m in config.members)
