"""Plain-text views of a Messages API request body: system prompt, first and last user message."""

from __future__ import annotations

from typing import Any


def system_text(body: dict[str, Any]) -> str:
    """The system prompt, whether a string or a list of text blocks."""
    system = body.get("system")
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def content_text(content: Any) -> str:
    """The text of a message's content: text blocks and the contents of tool_result blocks."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "tool_result":
            parts.append(content_text(block.get("content")))
    return "\n".join(parts)


def _user_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]


def first_user_text(body: dict[str, Any]) -> str:
    users = _user_messages(body)
    return content_text(users[0].get("content")) if users else ""


def last_user_text(body: dict[str, Any]) -> str:
    users = _user_messages(body)
    return content_text(users[-1].get("content")) if users else ""


def last_prompt_text(body: dict[str, Any]) -> str:
    """The text of the newest user message that is a prompt (has text and no tool results): the turn's opener. Text
    after tool results (a message delivered mid-turn, a reminder) leaves the turn what it was."""
    for message in reversed(_user_messages(body)):
        content = message.get("content")
        if isinstance(content, str):
            return content
        kinds = {b.get("type") for b in content if isinstance(b, dict)} if isinstance(content, list) else set()
        if "text" in kinds and "tool_result" not in kinds:
            return content_text([b for b in content if isinstance(b, dict) and b.get("type") == "text"])
    return ""
