"""AWS event-stream framing, as Amazon Bedrock streams a response (`invoke-with-response-stream`): each Messages
stream event as a `chunk` frame (its JSON, base64, under `bytes`), an error as an `exception` frame."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

CONTENT_TYPE = "application/vnd.amazon.eventstream"
_STRING = 7  # the header value type for a UTF-8 string
PRELUDE = 12  # total length, headers length, prelude CRC: 4 bytes each
# Bedrock's exception frames are named as its HTTP errors are; the SDK turns them back into an `error` event
EXCEPTIONS = {"overloaded_error": "serviceUnavailableException", "rate_limit_error": "throttlingException",
              "api_error": "internalServerException"}  # fmt: skip


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message: prelude (lengths + CRC32), string headers, payload, CRC32 of all before it."""
    head = b"".join(_header(name, value) for name, value in headers.items())
    prelude = struct.pack(">II", PRELUDE + len(head) + len(payload) + 4, len(head))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + payload
    return message + struct.pack(">I", zlib.crc32(message))


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return struct.pack(">B", len(raw_name)) + raw_name + struct.pack(">BH", _STRING, len(raw_value)) + raw_value


def encode(name: str, data: dict[str, Any]) -> bytes:
    """A Messages stream event (`name`, `data`) as Bedrock frames it."""
    if name == "error":
        error = data.get("error", {})
        kind = EXCEPTIONS.get(str(error.get("type")), "validationException")
        body = json.dumps({"message": str(error.get("message", ""))}).encode()
        return frame({":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"}, body)
    event = base64.b64encode(json.dumps(data, ensure_ascii=False).encode()).decode()
    payload = json.dumps({"bytes": event}).encode()
    return frame({":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}, payload)
