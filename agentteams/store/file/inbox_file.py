"""One inbox file's bytes: its elements checked one by one against 2.1.330's schema (a bad or broken one set aside,
never lost, its neighbours kept), its hidden side files, and appends byte-identical to Claude Code's full re-dump."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentteams import diagnostics
from agentteams.errors import CorruptFileError
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import dump_compact, dump_json, encode, now_iso, write_aside
from agentteams.store.fs.salvage import BadElement, salvage_array
from agentteams.store.records import Envelope, ShapeError


def spool_file(inbox: Path) -> Path:
    return inbox.with_name(f".{inbox.name}.spool")


def in_flight_file(inbox: Path) -> Path:
    """A spool a committer has taken and not yet finished writing into the inbox."""
    return inbox.with_name(f".{inbox.name}.spool.inflight")


def rejected_file(inbox: Path) -> Path:
    """Where elements 2.1.330 would drop are kept, one JSON line each: `alice.json` -> `alice.rejected.jsonl`.

    No inbox is named so (agent names never contain `.`), and it does not end in `.json`: no reader takes it
    for an inbox.
    """
    return inbox.with_name(f"{inbox.stem}.rejected.jsonl")


@dataclass(frozen=True)
class Rejected:
    """An inbox element that is not a message 2.1.330 keeps: its index in the file, itself, and why."""

    index: int
    element: Any
    reason: str


@dataclass
class InboxElements:
    """An inbox file's array, split: the messages with their elements as read, the rejected elements, and the
    elements that are not JSON at all (each one's exact bytes)."""

    items: list[Any]
    rejected: list[Rejected]
    envelopes: list[Envelope] = field(default_factory=list)  # built by `parse_inbox` only
    broken: list[BadElement] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.rejected and not self.broken


def _array(raw: bytes, path: Path) -> tuple[list[tuple[int, Any]], list[BadElement]]:
    """The array's elements with their positions, and its broken elements; CorruptFileError when `raw` is not
    an array at all. Only a file that does not parse whole pays for the element-by-element salvage."""
    try:
        data = json.loads(raw.decode("utf-8", "surrogatepass"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        salvaged = salvage_array(raw)
        if salvaged is None or not salvaged.elements:  # nothing to save: the file goes aside whole, as it was
            raise CorruptFileError(f"{path} is not valid JSON ({e})") from e
        return salvaged.elements, salvaged.bad
    if not isinstance(data, list):
        raise ShapeError(f"{path}: expected a JSON array of messages")
    return list(enumerate(data)), []


def parse_inbox(raw: bytes, path: Path) -> InboxElements:
    """Every element of the inbox in `raw` read as a message, or rejected, or broken; CorruptFileError when `raw`
    is not a JSON array (the whole file is then unusable)."""
    if not raw.strip():
        return InboxElements([], [], [])  # a CLI creating the file ("wx", then write) can be caught in between
    items: list[Any] = []
    envs: list[Envelope] = []
    rejected: list[Rejected] = []
    elements, broken = _array(raw, path)
    for i, item in elements:
        try:
            envs.append(Envelope.from_json(item, f"{path}[{i}]"))
            items.append(item)
        except ShapeError as e:
            rejected.append(Rejected(i, item, str(e)))
    return InboxElements(items, rejected, envs, broken)


def unread_only(raw: bytes, path: Path) -> list[Envelope] | None:
    """The unread messages of an inbox that parses whole, building only those (a woken agent's read: the inbox
    keeps up to KEEP_DELIVERED read ones); None when the file needs the full read, which sets bad elements aside:
    it does not parse, or an unread element is bad. A bad read element waits for the next locked rewrite."""
    if not raw.strip():
        return []
    try:
        data = json.loads(raw.decode("utf-8", "surrogatepass"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, list):
        return None
    out = []
    for i, item in enumerate(data):
        if isinstance(item, dict) and item.get("read") is True:
            continue
        try:
            out.append(Envelope.from_json(item, f"{path}[{i}]"))
        except ShapeError:
            return None
    return out


def check_inbox(raw: bytes, path: Path) -> InboxElements:
    """As `parse_inbox`, without building the messages: what a sender needs before it rewrites the file."""
    items: list[Any] = []
    rejected: list[Rejected] = []
    elements, broken = _array(raw, path)
    for i, item in elements:
        problem = Envelope.problem(item)
        if problem is None:
            items.append(item)
        else:
            rejected.append(Rejected(i, item, f"{path}[{i}]: {problem}"))
    return InboxElements(items, rejected, broken=broken)


def set_aside(inbox: Path, found: InboxElements) -> None:
    """Keep the bad elements beside the inbox, durably, with one warning each: a rejected element in the inbox's
    rejects file, a broken one's exact bytes in a `.corrupt-…` file of its own.

    Called under the inbox lock, before the inbox is rewritten without them: a crash in between leaves an
    element in both places, never in neither.
    """
    for bad in found.broken:
        aside = write_aside(inbox, bad.raw)
        diagnostics.warning("%s[%d]: %s; moved its %d bytes to %s", inbox, bad.index, bad.reason, len(bad.raw), aside)
    rejected = found.rejected
    if not rejected:
        return
    aside = rejected_file(inbox)
    at = now_iso()
    lines = b"".join(
        encode(dump_compact({"rejectedAt": at, "index": r.index, "reason": r.reason, "element": r.element})) + b"\n"
        for r in rejected
    )
    safe_paths.append_bytes(aside, lines)
    for r in rejected:
        diagnostics.warning("%s; moved it out of the inbox to %s", r.reason, aside)


def array_bytes(items: list[Any]) -> bytes:
    """An inbox file holding these elements, as Claude Code writes it."""
    return encode(dump_json(items))


def _item_bytes(env: Envelope) -> bytes:
    # An array element of JSON.stringify(list, null, 2) is the element's own indent-2 dump shifted
    # two spaces right; raw newlines cannot occur inside JSON strings, so shifting every line is exact.
    return encode(dump_json(env.to_json()).replace("\n", "\n  "))


def items_bytes(envs: list[Envelope]) -> bytes:
    """The envelopes as consecutive elements of an indent-2 array, without the brackets."""
    return b",\n  ".join(_item_bytes(e) for e in envs)


def append_to_array(current: bytes, envs: list[Envelope]) -> bytes | None:
    """`current` (a JSON array's text) with `envs` appended, byte-identical to a full re-dump.

    None when `current` is not an array's text.
    """
    # Index arithmetic, not strip()/slicing: on a large inbox every intermediate copy costs ~1.5 ms here.
    start, end = _trim(current, 0, len(current))
    if end - start < 2 or current[start] != ord("[") or current[end - 1] != ord("]"):
        return None
    items = items_bytes(envs)
    inner_start, inner_end = _trim(current, start + 1, end - 1)
    if inner_start == inner_end:
        return b"[\n  " + items + b"\n]"
    return b"".join((memoryview(current)[start:inner_end], b",\n  ", items, b"\n]"))


_WHITESPACE = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.strip() removes


def _trim(buf: bytes, start: int, end: int) -> tuple[int, int]:
    """The bounds of `buf[start:end]` without leading and trailing ASCII whitespace."""
    while start < end and buf[start] in _WHITESPACE:
        start += 1
    while end > start and buf[end - 1] in _WHITESPACE:
        end -= 1
    return start, end


def array_prefix_end(path: Path, size: int, window: int = 512) -> int | None:
    """Where the last element of the non-empty JSON array in `path` ends; None when that is not clear.

    Reads only the file's two ends (the caller holds the inbox lock, so the file cannot change).
    """
    with safe_paths.open_file(path, "rb") as f:
        head = f.read(window)
        f.seek(max(0, size - window))
        tail = f.read(window)
    first, _ = _trim(head, 0, len(head))
    _, end = _trim(tail, 0, len(tail))
    if first >= len(head) or head[first] != ord("[") or end == 0 or tail[end - 1] != ord("]"):
        return None
    _, last = _trim(tail, 0, end - 1)
    if last == 0 or tail[last - 1] in b"[,":
        return None  # the element's end lies before the window, or the array is empty or malformed
    return size - len(tail) + last
