"""An answer's blocks rebuilt from the API's raw stream events as each one finishes: with partial messages on, Claude
Code writes a block's `assistant` line when its `content_block_stop` comes, before that event's own line."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class StreamedBlocks:
    """The streaming answer's id, model and opening usage, its blocks so far, and which of them were written."""

    message: dict[str, Any] = field(default_factory=dict)  # message_start's message (id, model, usage)
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    partial_json: dict[int, str] = field(default_factory=dict)
    written: set[tuple[str, int]] = field(default_factory=set)  # (message id, index) of blocks already out

    def feed(self, raw: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """Take one raw event; the block (with its index) it finished, if it finished one."""
        kind, index = raw.get("type"), raw.get("index")
        if kind == "message_start" and isinstance(raw.get("message"), dict):
            self.message, self.blocks, self.partial_json = raw["message"], {}, {}
        elif kind == "content_block_start" and isinstance(index, int) and isinstance(raw.get("content_block"), dict):
            self.blocks[index] = dict(raw["content_block"])
        elif kind == "content_block_delta" and isinstance(index, int) and index in self.blocks:
            self._delta(self.blocks[index], index, raw.get("delta") or {})
        elif kind == "content_block_stop" and isinstance(index, int) and index in self.blocks:
            block = self.blocks[index]
            if index in self.partial_json:  # a tool call's input, whole now
                text = self.partial_json.pop(index)
                try:
                    block["input"] = json.loads(text) if text else {}
                except ValueError:
                    return None  # not JSON after all: the whole answer's line carries it as the API finished it
            self.written.add((self.message_id, index))
            return index, block
        return None

    @property
    def message_id(self) -> str:
        return str(self.message.get("id") or "")

    def was_written(self, message_id: str, index: int) -> bool:
        return (message_id, index) in self.written

    def _delta(self, block: dict[str, Any], index: int, delta: dict[str, Any]) -> None:
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + str(delta.get("text", ""))
        elif kind == "input_json_delta":
            self.partial_json[index] = self.partial_json.get(index, "") + str(delta.get("partial_json", ""))
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
        elif kind == "signature_delta":
            block["signature"] = delta.get("signature", "")
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))
