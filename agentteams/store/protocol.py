"""Protocol messages carried as compact JSON inside an envelope's `text`, typed and parsed losslessly.

`parse_message` returns None for plain text and `UnknownMessage` for a type we do not know, so a
newer peer's messages are kept and shown, never crash a reader.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, ClassVar

from agentteams.store.fs.atomic_json import dump_compact, epoch_ms, now_iso
from agentteams.store.records import Record, ShapeError, key


@dataclass(kw_only=True)
class Message(Record):
    """Base of every protocol message; `TYPE` is written first as `type`."""

    TYPE: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        body = super().to_json()
        body.pop("type", None)
        return {"type": self.TYPE, **body}

    def to_text(self) -> str:
        return dump_compact(self.to_json())


@dataclass(kw_only=True)
class TaskAssignment(Message):
    TYPE = "task_assignment"
    ORDER = ("type", "taskId", "subject", "description", "assignedBy", "timestamp")
    task_id: str = key("taskId", str, "")
    subject: str = key("subject", str, "")
    description: str = key("description", str, "")
    assigned_by: str = key("assignedBy", str, "")
    timestamp: str = key("timestamp", str, factory=now_iso)


@dataclass(kw_only=True)
class IdleNotification(Message):
    TYPE = "idle_notification"
    ORDER = (
        "type", "from", "timestamp", "idleReason", "summary", "completedTaskId", "completedStatus",
        "failureReason", "result",
    )  # fmt: skip
    sender: str = key("from", str, "")
    timestamp: str = key("timestamp", str, "")
    idle_reason: str | None = key("idleReason", str, "available")
    summary: str | None = key("summary", str)
    completed_task_id: str | None = key("completedTaskId", str)
    completed_status: str | None = key("completedStatus", str)
    failure_reason: str | None = key("failureReason", str)
    result: str | None = key("result", str)  # 2.1.330: the turn's final assistant text


@dataclass(kw_only=True)
class ShutdownRequest(Message):
    TYPE = "shutdown_request"
    ORDER = ("type", "requestId", "from", "reason", "timestamp")
    request_id: str = key("requestId", str, "")
    sender: str = key("from", str, "")
    reason: str | None = key("reason", str)
    timestamp: str = key("timestamp", str, "")

    @staticmethod
    def new_request_id(target: str) -> str:
        return f"shutdown-{epoch_ms()}@{target}"

    @classmethod
    def to(cls, target: str, sender: str, reason: str) -> ShutdownRequest:
        """A new request to `target`, stamped now (its id names the target, as Claude Code's do)."""
        return cls(request_id=cls.new_request_id(target), sender=sender, reason=reason, timestamp=now_iso())


@dataclass(kw_only=True)
class ShutdownApproved(Message):
    TYPE = "shutdown_approved"
    ORDER = ("type", "requestId", "from", "timestamp", "paneId", "backendType")
    request_id: str = key("requestId", str, "")
    sender: str = key("from", str, "")
    timestamp: str = key("timestamp", str, "")
    pane_id: str | None = key("paneId", str, "")
    backend_type: str | None = key("backendType", str)


@dataclass(kw_only=True)
class ShutdownRejected(Message):
    TYPE = "shutdown_rejected"
    ORDER = ("type", "requestId", "from", "reason", "timestamp")
    request_id: str = key("requestId", str, "")
    sender: str = key("from", str, "")
    reason: str = key("reason", str, "")
    timestamp: str = key("timestamp", str, "")


@dataclass(kw_only=True)
class PlanApprovalRequest(Message):
    TYPE = "plan_approval_request"
    ORDER = ("type", "from", "timestamp", "planFilePath", "planContent", "requestId")
    sender: str = key("from", str, "")
    timestamp: str = key("timestamp", str, "")
    plan_file_path: str = key("planFilePath", str, "")
    plan_content: str = key("planContent", str, "")
    request_id: str = key("requestId", str, "")


@dataclass(kw_only=True)
class PlanApprovalResponse(Message):
    TYPE = "plan_approval_response"
    ORDER = ("type", "requestId", "approved", "feedback", "timestamp", "permissionMode", "planDigest")
    request_id: str = key("requestId", str, "")
    approved: bool = key("approved", bool, False)
    feedback: str | None = key("feedback", str)
    timestamp: str = key("timestamp", str, "")
    permission_mode: str | None = key("permissionMode", str)
    plan_digest: str | None = key("planDigest", str)  # 2.1.330: `plan_digest()` of the plan approved


def plan_digest(plan_content: str) -> str:
    """`planDigest` (2.1.330): the SHA-256 hex of a plan request's `planContent`, as UTF-8."""
    return hashlib.sha256(plan_content.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(kw_only=True)
class PermissionRequest(Message):
    TYPE = "permission_request"
    ORDER = (
        "type", "request_id", "agent_id", "tool_name", "tool_use_id", "description", "input",
        "permission_suggestions",
    )  # fmt: skip
    request_id: str = key("request_id", str, "")
    agent_id: str = key("agent_id", str, "")
    tool_name: str = key("tool_name", str, "")
    tool_use_id: str = key("tool_use_id", str, "")
    description: str = key("description", str, "")
    input: dict[str, Any] = key("input", dict, factory=dict)
    permission_suggestions: list[Any] | None = key("permission_suggestions", list)


@dataclass(kw_only=True)
class PermissionResponse(Message):
    TYPE = "permission_response"
    ORDER = ("type", "request_id", "subtype", "response", "error", "tool_use_id", "approved_request")
    request_id: str = key("request_id", str, "")
    subtype: str = key("subtype", str, "success")
    response: dict[str, Any] | None = key("response", dict)
    error: str | None = key("error", str)
    # 2.1.330 (FROM-BUNDLE, never seen on disk: the order above is a guess; a file's own order is kept)
    tool_use_id: str | None = key("tool_use_id", str)
    # its shape is unknown: any JSON value but null is taken as it comes, so a response never fails to parse on it
    approved_request: Any = key("approved_request", (dict, list, str, int, float, bool))


@dataclass(kw_only=True)
class TaskCompleted(Message):
    TYPE = "task_completed"
    ORDER = ("type", "from", "taskId", "taskSubject", "timestamp")
    sender: str | None = key("from", str)
    task_id: str = key("taskId", str, "")
    task_subject: str | None = key("taskSubject", str)
    timestamp: str | None = key("timestamp", str)


@dataclass(kw_only=True)
class TeammateTerminated(Message):
    TYPE = "teammate_terminated"
    ORDER = ("type", "message")
    message: str = key("message", str, "")


@dataclass(kw_only=True)
class ModeSetRequest(Message):
    TYPE = "mode_set_request"
    ORDER = ("type", "mode", "from")
    mode: str = key("mode", str, "")
    sender: str = key("from", str, "")


@dataclass(kw_only=True)
class ModelSetRequest(Message):
    """Ours, from a lead: use this model from your next request on (the conversation is kept). Sent only to
    teammates of ours: a real `claude` teammate's model is fixed when it starts."""

    TYPE = "agentteams_model_set_request"
    ORDER = ("type", "model", "from", "timestamp")
    model: str = key("model", str, "")
    sender: str = key("from", str, "")
    timestamp: str = key("timestamp", str, "")


@dataclass(kw_only=True)
class CompactRequest(Message):
    """Ours, from a lead: compact your conversation when next idle (`instructions` say what the summary keeps).
    Named so it cannot clash with a type of Claude Code's; a real `claude` teammate does not know it and shows
    it to its model as it shows any unknown frame, which is why our lead sends it only to teammates of ours."""

    TYPE = "agentteams_compact_request"
    ORDER = ("type", "from", "instructions", "timestamp")
    sender: str = key("from", str, "")
    instructions: str | None = key("instructions", str)
    timestamp: str = key("timestamp", str, "")


@dataclass(kw_only=True)
class UnknownMessage(Message):
    """A protocol message of a type this version does not know; kept verbatim."""

    ORDER = ("type",)
    type_name: str = key("type", str, "")

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type_name, **{k: v for k, v in self.extra.items() if k != "type"}}


MESSAGE_TYPES: dict[str, type[Message]] = {
    cls.TYPE: cls
    for cls in (
        TaskAssignment, IdleNotification, ShutdownRequest, ShutdownApproved, ShutdownRejected,
        PlanApprovalRequest, PlanApprovalResponse, PermissionRequest, PermissionResponse, TaskCompleted,
        TeammateTerminated, ModeSetRequest, ModelSetRequest, CompactRequest,
    )
}  # fmt: skip


def parse_message(text: str) -> Message | None:
    """The protocol message in `text`, or None when `text` is a plain message."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        obj = json.loads(stripped)
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        return None
    cls = MESSAGE_TYPES.get(obj["type"])
    if cls is None:
        return UnknownMessage(type_name=obj["type"], extra=dict(obj), key_order=tuple(obj))
    try:
        return cls.from_json(obj, obj["type"])
    except ShapeError:
        # a known type with a shape we cannot read is still not plain text: keep it whole
        return UnknownMessage(type_name=obj["type"], extra=dict(obj), key_order=tuple(obj))
