"""Reading a session transcript (ours or the real Claude Code's) back into a conversation, and finding sessions:
the newest of a cwd (`-c`), one by id (`-r ID`), the recent ones with their first prompt (the picker)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from agentteams.errors import AgentTeamsError, UnsafePathError
from agentteams.store.fs import safe_paths
from agentteams.store.paths import LEAD_NAME, Layout

Message = dict[str, Any]
CHAINED = ("user", "assistant", "attachment", "system")


@dataclass
class Loaded:
    """A session as a resume needs it: the conversation to send, where the chain ends, what it ran on."""

    session_id: str
    path: Path
    messages: list[Message]
    leaf: str | None
    model: str | None = None  # the newest answer's model
    allowed: list[dict[str, Any]] = field(default_factory=list)  # the person's "always" answers: tool, target, kind
    entries: list[dict[str, Any]] = field(default_factory=list)  # the main chain's entries, oldest first


@dataclass(frozen=True)
class SessionInfo:
    """One session of a cwd, for the picker and `-c`."""

    session_id: str
    path: Path
    first_prompt: str
    modified: float  # epoch seconds of the file's last write
    headless: bool = False  # started by -p or an SDK program (`entrypoint` sdk-cli, sdk-py, ...), not at a prompt
    title: str = ""  # its display name (-n, /rename): the newest `custom-title` entry

    def age(self, now: float | None = None) -> str:
        seconds = max(0, int((now or time.time()) - self.modified))
        for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
            if seconds >= size:
                return f"{seconds // size}{unit} ago"
        return f"{seconds}s ago"


def read_entries(path: Path) -> list[dict[str, Any]]:
    """Every well-formed entry of a file; a torn last line (a crash mid-write) or a foreign line is skipped."""
    out = []
    raw = safe_paths.read_bytes(path)  # a transcript is never read through a planted link
    if raw is None:
        raise FileNotFoundError(f"no transcript {path}")
    for line in raw.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("type"), str):
            out.append(entry)
    return out


def load(path: Path, at: str | None = None) -> Loaded:
    """The main conversation of a transcript, from its newest entry (or the entry `at`, `--resume-session-at`) back
    along `parentUuid` to its start (or to the last compaction's boundary, where the summary and the messages it
    kept begin)."""
    entries = read_entries(path)
    by_uuid = {e["uuid"]: e for e in entries if e["type"] in CHAINED and isinstance(e.get("uuid"), str)}
    main = [e for e in by_uuid.values() if not e.get("isSidechain")]
    chain: list[dict[str, Any]] = []
    node = _tip(entries, by_uuid, main[-1] if main else None)
    if at is not None and (node := by_uuid.get(at)) is None:
        raise AgentTeamsError(f"No message found with message.uuid of: {at}")  # Claude Code's words
    while node is not None:
        chain.append(node)
        if node.get("subtype") == "compact_boundary":
            break
        parent = node.get("parentUuid")
        node = by_uuid.get(parent) if isinstance(parent, str) else None
    chain.reverse()
    chain = _with_preserved(chain, by_uuid)
    allowed = [e["allow"] for e in entries if e["type"] == "agentteams-permission" and isinstance(e.get("allow"), dict)]
    models = [m for e in chain if e["type"] == "assistant" and (m := _message(e).get("model")) != "<synthetic>"]
    session_id = str(next((e["sessionId"] for e in entries if e.get("sessionId")), path.stem))
    return Loaded(session_id, path, to_messages(chain), chain[-1]["uuid"] if chain else None,
                  str(models[-1]) if models else None, allowed, chain)  # fmt: skip


def _tip(entries: list[dict[str, Any]], by_uuid: dict[str, dict[str, Any]],
         newest: dict[str, Any] | None) -> dict[str, Any] | None:  # fmt: skip
    """Where the conversation ends: its newest entry, unless a `last-prompt` written after it names an earlier one
    (the person rewound to before a prompt and left without sending another: the later entries are off the chain)."""
    for entry in reversed(entries):
        if entry is newest:
            break
        if entry.get("type") == "last-prompt" and "leafUuid" in entry:
            leaf = entry.get("leafUuid")
            if leaf is None:
                return None
            found = by_uuid.get(leaf) if isinstance(leaf, str) else None
            return found if found is not None else newest
    return newest


def _with_preserved(chain: list[dict[str, Any]], by_uuid: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Claude Code keeps a few messages through a compaction by naming them in the boundary: they follow the
    summary (the boundary's `preservedMessages.anchorUuid`)."""
    if not chain or chain[0].get("subtype") != "compact_boundary":
        return chain
    kept = chain[0].get("compactMetadata", {}).get("preservedMessages") or {}
    anchor, uuids = kept.get("anchorUuid"), [u for u in kept.get("uuids", []) if u in by_uuid]
    at = next((i for i, e in enumerate(chain) if e.get("uuid") == anchor), None)
    if at is None or not uuids:
        return chain
    return [*chain[: at + 1], *(by_uuid[u] for u in uuids), *chain[at + 1 :]]


def _message(entry: dict[str, Any]) -> dict[str, Any]:
    message = entry.get("message")
    return message if isinstance(message, dict) else {}


def to_messages(chain: list[dict[str, Any]]) -> list[Message]:
    """Chained entries as API messages: the blocks of one answer (one `message.id`) join again, consecutive user
    entries (a prompt, tool results, notes) join into one user message; context attachments and system entries
    are the writing CLI's own and stay out (ours adds its own context)."""
    out: list[Message] = []
    last_id: str | None = None
    for entry in chain:
        kind, message = entry["type"], _message(entry)
        if kind not in ("user", "assistant") or "content" not in message:
            continue
        blocks = _blocks(message["content"])
        if kind == "assistant" and out and out[-1]["role"] == "assistant" and message.get("id") == last_id:
            out[-1]["content"].extend(blocks)
        elif out and out[-1]["role"] == kind == "user":
            out[-1]["content"] = [*_blocks(out[-1]["content"]), *blocks]
        else:
            out.append({"role": kind, "content": message["content"] if kind == "user" else blocks})
        last_id = message.get("id") if kind == "assistant" else None
    return _answered(out)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [dict(b) for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _answered(messages: list[Message]) -> list[Message]:
    """A session that died between a tool call and its result would be refused by the API: each unanswered
    tool_use gets an error result saying so, as Claude Code does after an interruption."""
    fixed: list[Message] = []
    for i, message in enumerate(messages):
        fixed.append(message)
        if message["role"] != "assistant":
            continue
        uses = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
        following = messages[i + 1]["content"] if i + 1 < len(messages) and messages[i + 1]["role"] == "user" else []
        answered = {b.get("tool_use_id") for b in _blocks(following)}
        missing = [{"type": "tool_result", "tool_use_id": u, "content": "[the session ended before this tool ran]",
                    "is_error": True} for u in uses if u not in answered]  # fmt: skip
        if missing:
            if following:
                messages[i + 1]["content"] = [*missing, *_blocks(following)]
            else:
                fixed.append({"role": "user", "content": missing})
    return fixed


def sessions(layout: Layout, cwd: Path | str, limit: int = 50, *, interactive: bool = False) -> list[SessionInfo]:
    """The sessions of a cwd, newest first: its own project directory's transcripts, leaving out our
    teammates' (a teammate is resumed through its team, not by `-c`); with `interactive`, only those a person
    had at a prompt, whichever CLI wrote them (claude 2.1.332's interactive `-c` passes over -p and SDK sessions;
    its `-p -c` does not)."""
    folder = layout.transcript_file(cwd, "any").parent
    try:
        files = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    found = []
    for path in files:
        info = _info(path)
        if info is not None and not (interactive and info.headless):
            found.append(info)
        if len(found) >= limit:
            break
    return found


def _parsed(line: bytes) -> Any:
    try:
        return json.loads(line) if line.strip().startswith(b"{") else None
    except ValueError:
        return None


def _info(path: Path) -> SessionInfo | None:
    try:
        modified = path.stat().st_mtime
        with safe_paths.open_file(path, "rb") as f:
            lines = [f.readline() for _ in range(200)]
            tail = _tail(f) if f.readline() else []
    except (OSError, UnsafePathError):
        return None
    head = [entry for line in lines if (entry := _parsed(line)) is not None]  # a torn line costs itself only
    titles = [e["customTitle"] for e in [*head, *tail] if isinstance(e, dict) and e.get("type") == "custom-title"
              and isinstance(e.get("customTitle"), str)]  # fmt: skip
    prompts = [e for e in head if isinstance(e, dict) and e.get("type") == "user" and not e.get("isSidechain")]
    if not prompts or prompts[0].get("agent", LEAD_NAME) != LEAD_NAME:
        return None
    text = next((c for e in prompts if isinstance(c := _message(e).get("content"), str) and not e.get("isMeta")), "")
    headless = str(prompts[0].get("entrypoint") or "").startswith("sdk-")
    return SessionInfo(path.stem, path, " ".join(text.split())[:80], modified, headless, titles[-1] if titles else "")


def _tail(f: IO[bytes]) -> list[Any]:
    """The entries of a long file's last 64 KiB, where a name given later (claude writes it again as a session
    ends) is found without reading the whole file."""
    f.seek(0, 2)
    f.seek(max(0, f.tell() - 65536))
    return [entry for line in f.read().split(b"\n")[1:] if (entry := _parsed(line)) is not None]


def find(layout: Layout, cwd: Path | str, session_id: str) -> Path | None:
    """A session's file by id: in the cwd's project directory first, else in any project's (Claude Code resumes
    an id from anywhere on the machine)."""
    own = layout.transcript_file(cwd, session_id)
    if own.exists():
        return own
    name = own.name
    for folder in sorted(layout.projects_dir.glob("*")) if layout.projects_dir.is_dir() else []:
        if (folder / name).exists():
            return folder / name
    return None


def newest(layout: Layout, cwd: Path | str, *, interactive: bool = False) -> SessionInfo | None:
    found = sessions(layout, cwd, limit=1, interactive=interactive)
    return found[0] if found else None


def fork(loaded: Loaded, path: Path, new_id: str) -> None:
    """A copy of a session's conversation under a new id (the original untouched): the same entries and uuids,
    `sessionId` rewritten, each copied answer naming the session that made it, as Claude Code forks."""
    lines = []
    for entry in loaded.entries:
        copy = {**entry, "sessionId": new_id}
        if entry["type"] == "assistant":
            copy["requestSessionId"] = loaded.session_id
        lines.append(json.dumps(copy, ensure_ascii=False) + "\n")
    safe_paths.make_dir(path.parent, parents=True)
    fd = safe_paths.open_fd(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("".join(lines))
