"""Protocol messages: the fields Claude Code 2.1.330 added (idle `result`, permission `tool_use_id` and
`approved_request`, plan `planDigest`) are typed, and texts without them stay byte-identical."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from agentteams.store.fs.atomic_json import dump_compact
from agentteams.store.protocol import (
    IdleNotification,
    PermissionResponse,
    PlanApprovalResponse,
    UnknownMessage,
    parse_message,
    plan_digest,
)

# 2.1.330's idle notice, byte for byte (golden-2.1.330/inbox_lead_idle_notification_from_real_teammate.json)
IDLE_330 = (
    '{"type":"idle_notification","from":"bob","timestamp":"2026-11-23T11:35:07.606Z","idleReason":"available",'
    '"result":"bob: hi"}'
)


def test_idle_result_is_read_and_kept_where_it_was() -> None:
    msg = parse_message(IDLE_330)
    assert isinstance(msg, IdleNotification)
    assert (msg.result, msg.idle_reason, msg.summary) == ("bob: hi", "available", None)
    assert msg.to_text() == IDLE_330
    made = IdleNotification(sender="bob", timestamp="t", summary="[to alice] hi", failure_reason="x", result="done")
    assert list(made.to_json()) == ["type", "from", "timestamp", "idleReason", "summary", "failureReason", "result"]
    old = IdleNotification(sender="bob", timestamp="t").to_text()
    assert old == '{"type":"idle_notification","from":"bob","timestamp":"t","idleReason":"available"}'


def test_an_idle_result_of_the_wrong_type_keeps_the_message_whole() -> None:
    text = IDLE_330.replace('"bob: hi"', "5")
    msg = parse_message(text)
    assert isinstance(msg, UnknownMessage) and msg.to_text() == text


OLD_PERMISSION = {"type": "permission_response", "request_id": "r1", "subtype": "success",
                  "response": {"updated_input": {"command": "ls"}, "permission_updates": []}}  # fmt: skip


@pytest.mark.parametrize("approved", [{"tool_name": "Bash", "input": {"command": "ls"}}, True, "r1", [1]], ids=repr)
def test_permission_response_carries_tool_use_id_and_approved_request(approved: Any) -> None:
    body = {**OLD_PERMISSION, "tool_use_id": "toolu_1", "approved_request": approved}
    msg = parse_message(dump_compact(body))
    assert isinstance(msg, PermissionResponse)
    assert (msg.tool_use_id, msg.approved_request) == ("toolu_1", approved)
    assert msg.to_text() == dump_compact(body)
    reordered = {"type": "permission_response", "tool_use_id": "toolu_1", **OLD_PERMISSION}
    again = parse_message(dump_compact(reordered))
    assert isinstance(again, PermissionResponse) and again.to_text() == dump_compact(reordered)  # its own order


def test_a_permission_response_without_them_is_unchanged() -> None:
    msg = parse_message(dump_compact(OLD_PERMISSION))
    assert isinstance(msg, PermissionResponse) and msg.tool_use_id is None and msg.approved_request is None
    assert msg.to_text() == dump_compact(OLD_PERMISSION)
    made = PermissionResponse(request_id="r1", response={"updated_input": {}}, tool_use_id="toolu_1")
    assert list(made.to_json()) == ["type", "request_id", "subtype", "response", "tool_use_id"]


def test_plan_approval_carries_the_plan_digest() -> None:
    assert plan_digest("") == hashlib.sha256(b"").hexdigest()
    assert plan_digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert plan_digest("é") == hashlib.sha256("é".encode()).hexdigest()
    made = PlanApprovalResponse(request_id="p1", approved=True, timestamp="t", permission_mode="default",
                                plan_digest=plan_digest("# Plan"))  # fmt: skip
    # 2.1.330's reply: {type, requestId, approved, timestamp, permissionMode, planDigest}
    assert list(made.to_json()) == ["type", "requestId", "approved", "timestamp", "permissionMode", "planDigest"]
    again = parse_message(made.to_text())
    assert isinstance(again, PlanApprovalResponse) and again.plan_digest == plan_digest("# Plan")
    old = '{"type":"plan_approval_response","requestId":"p1","approved":false,"feedback":"no","timestamp":"t"}'
    parsed = parse_message(old)
    assert isinstance(parsed, PlanApprovalResponse) and parsed.plan_digest is None and parsed.to_text() == old
