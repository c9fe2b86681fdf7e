"""Typed on-disk shapes — team config, member, inbox envelope, task — parsed and dumped losslessly.

Unknown keys are kept and written back; keys keep the order they were read in (new ones follow the
order Claude Code writes), except tasks of a 2.1.197 team, which that generation re-emits in schema order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Self, get_args

from agentteams.errors import CorruptFileError
from agentteams.pids import LeadProcess

TaskStatus = Literal["pending", "in_progress", "completed", "deleted"]
TASK_STATUSES: tuple[str, ...] = get_args(TaskStatus)
COLORS = ("blue", "green", "yellow", "purple", "orange", "pink", "cyan", "red")


class ShapeError(CorruptFileError):
    """Valid JSON whose shape is not what the file kind requires."""


def key(
    name: str, kind: type | tuple[type, ...], default: Any = None, *, factory: Callable[[], Any] | None = None
) -> Any:
    """A dataclass field stored under JSON key `name`, checked to be of `kind` when read."""
    meta = {"key": name, "kind": kind}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def _fits(value: Any, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    is_bool = isinstance(value, bool)  # a bool is an int to Python, never to JSON's readers
    return any(isinstance(value, k) and (k is bool or not is_bool) for k in kinds)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = (_JSON_NAMES.get(k, k.__name__) for k in (kind if isinstance(kind, tuple) else (kind,)))
    return " or ".join(dict.fromkeys(names))


@dataclass(kw_only=True, repr=False, eq=False)  # Record supplies both: fewer methods to generate
class Record:
    """Base of every on-disk object: typed fields plus `extra` (unknown keys) and the order read."""

    ORDER: ClassVar[tuple[str, ...]] = ()
    FORCE_ORDER: ClassVar[bool] = False
    PLACED: ClassVar[tuple[str, ...]] = ()  # keys `assign` puts where ORDER has them; others it appends, as JS does
    NON_NULL: ClassVar[frozenset[str]] = frozenset()  # keys whose null is a shape error, not "absent"
    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    key_order: tuple[str, ...] = field(default=(), repr=False, compare=False)
    read_null: frozenset[str] = field(default=frozenset(), repr=False, compare=False)  # known keys read as null

    @classmethod
    def _fields(cls) -> dict[str, dataclasses.Field[Any]]:
        known = _FIELDS.get(cls)
        if known is None:
            known = _FIELDS[cls] = {f.metadata["key"]: f for f in dataclasses.fields(cls) if "key" in f.metadata}
        return known

    @classmethod
    def _shape(cls) -> _Shape:
        shape = _SHAPES.get(cls)
        if shape is None:
            known = cls._fields()
            kinds = {k: f.metadata["kind"] for k, f in known.items()}
            kinds = {k: kind if isinstance(kind, tuple) else (kind,) for k, kind in kinds.items()}
            shape = _SHAPES[cls] = _Shape(
                {k: frozenset(kind) for k, kind in kinds.items()}, kinds,
                tuple(k for k, f in known.items() if _required(f)),
                converts=getattr(cls._convert, "__func__", None) is not getattr(Record._convert, "__func__", None),
            )  # fmt: skip
        return shape

    @classmethod
    def problem(cls, obj: object) -> str | None:
        """Why `obj` cannot be read as this record (a key's type, a null where none may be, a required key
        missing), or None when it can; builds no record, so a caller can check many objects cheaply."""
        read = cls._read(obj)
        return read if isinstance(read, str) else None

    @classmethod
    def _read(cls, obj: object) -> tuple[dict[str, Any], dict[str, Any], list[str]] | str:
        """In one pass over the keys (a board of 10 000 tasks is read with it): the values by field name, the
        unknown keys, the keys read as null; or why `obj` holds no such record."""
        if not isinstance(obj, dict):
            return f"expected an object, got {_json_type(obj)}"
        shape, known = cls._shape(), cls._fields()
        values: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        nulls: list[str] = []
        for k, v in obj.items():
            f = known.get(k)
            if f is None:
                extra[k] = v
            elif v is None:  # null where allowed reads as absent, and is written back as it was while still absent
                if k in cls.NON_NULL:
                    return f"{k!r} must be {_kind_name(shape.kinds[k])}, not null"
                nulls.append(k)
            elif type(v) in shape.exact[k] or _fits(v, shape.kinds[k]):  # json.loads gives exact types: one lookup
                values[f.name] = v
            else:
                return f"{k!r} must be {_kind_name(shape.kinds[k])}, not {_json_type(v)}"
        missing = [k for k in shape.required if obj.get(k) is None]
        return f"missing {', '.join(map(repr, missing))}" if missing else (values, extra, nulls)

    @classmethod
    def from_json(cls, obj: object, where: str = "") -> Self:
        where = where or cls.__name__
        read = cls._read(obj)
        if isinstance(read, str):
            raise ShapeError(f"{where}: {read}")
        values, extra, nulls = read
        assert isinstance(obj, dict)  # _read said so
        if cls._shape().converts:  # nested records, read as such
            keys = {f.name: k for k, f in cls._fields().items()}
            values = {name: cls._convert(keys[name], v, where) for name, v in values.items()}
        rec = cls(**values, extra=extra, key_order=tuple(obj), read_null=frozenset(nulls))
        rec.validate(where)
        return rec

    @classmethod
    def _convert(cls, json_key: str, value: Any, where: str) -> Any:
        """Hook for nested records; the default keeps the JSON value."""
        return value

    def validate(self, where: str) -> None:
        """Hook for value checks beyond types."""

    def _value(self, json_key: str, f: dataclasses.Field[Any]) -> Any:
        v = getattr(self, f.name)
        if isinstance(v, list) and v and isinstance(v[0], Record):
            return [r.to_json() for r in v]
        return v

    def to_json(self) -> dict[str, Any]:
        known = self._fields()
        out: dict[str, Any] = {}
        order = self.ORDER if self._forced_order() else (*self.key_order, *self.ORDER)
        for k in (*order, *known, *self.extra):
            if k in out:
                continue
            if k in known:
                v = self._value(k, known[k])
                if v is not None or k in self.read_null:
                    out[k] = v
            elif k in self.extra:
                out[k] = self.extra[k]
        return out

    def _forced_order(self) -> bool:
        """Whether keys are written in ORDER whatever order they were read in."""
        return self.FORCE_ORDER

    def _place(self, json_key: str) -> None:
        """Put a key new to a record read from a file where ORDER has it, not after every key read."""
        if not self.key_order or json_key in self.key_order:
            return  # a new record follows ORDER anyway
        later = self.ORDER[self.ORDER.index(json_key) + 1 :]
        at = next((i for i, k in enumerate(self.key_order) if k in later), len(self.key_order))
        self.key_order = (*self.key_order[:at], json_key, *self.key_order[at:])

    def assign(self, **fields: Any) -> None:
        """Set fields by attribute name. A new key goes after every key read, as a real claude's assignment appends it,
        except the PLACED ones, which go where ORDER has them (they are the ones we write sooner than it does)."""
        keys = {f.name: k for k, f in self._fields().items()}
        for attr, value in fields.items():
            setattr(self, attr, value)
            key = keys.get(attr)
            if key is not None and key in self.PLACED:
                self._place(key)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and isinstance(other, Record) and other.to_json() == self.to_json()

    __hash__ = None  # type: ignore[assignment]  # mutable, like any dataclass with eq

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_json()!r})"

    def replace(self, **changes: Any) -> Self:
        return dataclasses.replace(self, **changes)


_FIELDS: dict[type, dict[str, dataclasses.Field[Any]]] = {}


@dataclass(frozen=True)
class _Shape:
    """A record class's keys as `problem` checks them, computed once per class."""

    exact: dict[str, frozenset[type]]  # the JSON types each key takes, for the common case
    kinds: dict[str, tuple[type, ...]]
    required: tuple[str, ...]
    converts: bool = False  # the class reads some value into more than its JSON (nested records)


_SHAPES: dict[type, _Shape] = {}


_JSON_NAMES: dict[type, str] = {dict: "object", list: "array", str: "string", int: "number", float: "number",
                                 bool: "boolean"}  # fmt: skip


def _json_type(value: object) -> str:
    """A value's type as JSON names it, for messages about files."""
    return "null" if value is None else _JSON_NAMES.get(type(value), type(value).__name__)


def _required(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


@dataclass(kw_only=True, repr=False, eq=False)  # Record supplies both: fewer methods to generate
class Member(Record):
    """One entry of `members` in a team config."""

    LEAD_ORDER: ClassVar[tuple[str, ...]] = (
        "agentId", "name", "agentType", "model", "joinedAt", "tmuxPaneId", "cwd", "subscriptions",
        "backendType",
    )  # fmt: skip
    ORDER: ClassVar[tuple[str, ...]] = (
        "agentId", "name", "agentType", "color", "joinedAt", "tmuxPaneId", "subscriptions", "model",
        "prompt", "planModeRequired", "cwd", "backendType", "isActive",
    )  # fmt: skip
    # a lead reserves a teammate active (team/spawn/spawner.py), before the pane that brings backendType: Claude Code's
    # lead writes backendType first and the teammate then toggles isActive, after it
    PLACED: ClassVar[tuple[str, ...]] = ("backendType",)
    agent_id: str = key("agentId", str, dataclasses.MISSING)
    name: str = key("name", str, dataclasses.MISSING)
    joined_at: int = key("joinedAt", (int, float), dataclasses.MISSING)
    agent_type: str | None = key("agentType", str)
    color: str | None = key("color", str)
    tmux_pane_id: str | None = key("tmuxPaneId", str)
    subscriptions: list[Any] | None = key("subscriptions", list)
    model: str | None = key("model", str)
    prompt: str | None = key("prompt", str)
    plan_mode_required: bool | None = key("planModeRequired", bool)
    cwd: str | None = key("cwd", str)
    backend_type: str | None = key("backendType", str)
    is_active: bool | None = key("isActive", bool)
    mode: str | None = key("mode", str)
    worktree_path: str | None = key("worktreePath", str)
    allowed_tools: list[str] | None = key("allowedTools", list)
    disallowed_tools: list[str] | None = key("disallowedTools", list)
    verify_key: str | None = key("agentteamsKey", str)  # ours: the public key this member's envelopes verify with
    budget_tokens: int | None = key("agentteamsBudgetTokens", int)  # ours: its budget (team/budget.py)
    budget_usd: float | None = key("agentteamsBudgetUsd", (int, float))
    session_id: str | None = key("sessionId", str)  # ours: the session a relaunch after a crash resumes
    node: str | None = key("agentteamsNode", str)  # ours: the node it runs on (`agentteams node`); none: the lead's


LEAD_PROCESS = "leadProcess"


DEPARTED = "agentteamsDeparted"
MAX_DEPARTED = 16  # the most recent dead teammates kept for a resume


@dataclass(kw_only=True, repr=False, eq=False)  # Record supplies both: fewer methods to generate
class TeamConfig(Record):
    """`teams/<team>/config.json`."""

    ORDER: ClassVar[tuple[str, ...]] = (
        "name", "description", "createdAt", "leadAgentId", "leadSessionId", "leadProcess", "members",
        "hiddenPaneIds",
    )  # fmt: skip
    name: str = key("name", str, dataclasses.MISSING)
    created_at: int = key("createdAt", (int, float), dataclasses.MISSING)
    lead_agent_id: str = key("leadAgentId", str, dataclasses.MISSING)
    lead_session_id: str = key("leadSessionId", str, "")
    members: list[Member] = key("members", list, dataclasses.MISSING)
    description: str | None = key("description", str)
    hidden_pane_ids: list[str] | None = key("hiddenPaneIds", list)
    # ours: the entries of teammates that died, each with what it takes to resume it (`Task` with `resume`)
    departed: list[Member] | None = key(DEPARTED, list)

    @classmethod
    def _convert(cls, json_key: str, value: Any, where: str) -> Any:
        if json_key in ("members", DEPARTED):
            return [Member.from_json(m, f"{where}.{json_key}[{i}]") for i, m in enumerate(value)]
        return value

    def _value(self, json_key: str, f: dataclasses.Field[Any]) -> Any:
        if json_key == "members":
            return [m.to_json() for m in self.members]
        return super()._value(json_key, f)

    def member(self, name_or_id: str) -> Member | None:
        for m in self.members:
            if name_or_id in (m.name, m.agent_id):
                return m
        return None

    @property
    def lead_name(self) -> str:
        lead = self.member(self.lead_agent_id)
        return lead.name if lead else "team-lead"

    # `leadProcess` stays in `extra` as it was read, so a malformed one is still written back unchanged;
    # like 2.1.330, our logic then sees none.
    @property
    def lead_process(self) -> LeadProcess | None:
        return LeadProcess.from_json(self.extra.get(LEAD_PROCESS))

    @lead_process.setter
    def lead_process(self, value: LeadProcess | None) -> None:
        if value is None:
            self.extra.pop(LEAD_PROCESS, None)
        else:
            self.extra[LEAD_PROCESS] = value.to_json()
            self._place(LEAD_PROCESS)

    @property
    def from_2_1_330(self) -> bool:
        """Whether Claude Code 2.1.330 (or later) or we on its behalf made this team: its config has `leadProcess`,
        which 2.1.197 never writes. Decides the task key order (see `Task.schema_order`)."""
        return LEAD_PROCESS in self.extra


@dataclass(kw_only=True, repr=False, eq=False)  # Record supplies both: fewer methods to generate
class Envelope(Record):
    """One message in an inbox file; `text` holds plain text or a compact-JSON protocol message.

    Readable exactly when Claude Code 2.1.330 keeps it: string `from`, `text` and `timestamp`; `type`, `summary`,
    `color`, `from_plugin` strings when present (null refused), `read` a boolean when present.
    """

    ORDER: ClassVar[tuple[str, ...]] = (
        "from", "text", "summary", "timestamp", "color", "from_plugin", "msgV", "msg_id", "type", "read",
    )  # fmt: skip
    NON_NULL: ClassVar[frozenset[str]] = frozenset(
        {"from", "text", "timestamp", "type", "summary", "color", "from_plugin", "read"}
    )
    sender: str = key("from", str, dataclasses.MISSING)
    text: str = key("text", str, dataclasses.MISSING)
    timestamp: str = key("timestamp", str, dataclasses.MISSING)
    summary: str | None = key("summary", str)
    color: str | None = key("color", str)
    from_plugin: str | None = key("from_plugin", str)
    msg_v: int | None = key("msgV", int)
    msg_id: str | None = key("msg_id", str)
    type: str | None = key("type", str)
    read: bool | None = key("read", bool)
    # what this process concluded about the sender (never written): an unverified message reaches a model
    # marked as such and has no protocol effect
    unverified: bool = field(default=False, repr=False, compare=False)

    @property
    def identity(self) -> tuple[str, ...]:
        """How a message is recognised across rewrites by any process: never its index."""
        if self.msg_id:
            return ("id", self.msg_id)
        return ("key", self.sender, self.timestamp, self.text)

    @property
    def unread(self) -> bool:
        return self.read is not True


@dataclass(kw_only=True, repr=False, eq=False)  # Record supplies both: fewer methods to generate
class Task(Record):
    """`tasks/<team>/<id>.json`."""

    ORDER: ClassVar[tuple[str, ...]] = (
        "id", "subject", "description", "activeForm", "owner", "status", "blocks", "blockedBy", "metadata",
    )  # fmt: skip
    id: str = key("id", str, dataclasses.MISSING)
    subject: str = key("subject", str, dataclasses.MISSING)
    description: str = key("description", str, "")
    active_form: str | None = key("activeForm", str)
    owner: str | None = key("owner", str)
    status: TaskStatus = key("status", str, "pending")
    blocks: list[str] = key("blocks", list, dataclasses.MISSING)
    blocked_by: list[str] = key("blockedBy", list, dataclasses.MISSING)
    metadata: dict[str, Any] | None = key("metadata", dict)
    # 2.1.197 re-emits every key in ORDER on each write; 2.1.330 keeps keys where they are and appends new ones
    # (an `owner` set later follows `blockedBy`). The store sets this from the team's generation.
    schema_order: bool = field(default=True, repr=False, compare=False)

    def _forced_order(self) -> bool:
        return self.schema_order

    def validate(self, where: str) -> None:
        if self.status not in TASK_STATUSES:
            raise ShapeError(f"{where}: unknown status {self.status!r}")
        for name in ("blocks", "blocked_by"):
            ids = getattr(self, name)
            if ids and not all(isinstance(x, str) for x in ids):  # most lists are empty: no generator for them
                raise ShapeError(f"{where}: {name} must list task ids as strings")

    @property
    def resolved(self) -> bool:
        return self.status in ("completed", "deleted")
