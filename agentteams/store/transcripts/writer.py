"""Session transcripts in Claude Code's JSONL schema: one file per session under `projects/<cwd-slug>/` (and one per
subagent below it), every entry chained by `uuid`/`parentUuid`, secrets redacted (tests/golden-2.1.330/transcripts).

Reading one back into a conversation is `transcript_read`'s.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid as uuidlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentteams import __version__
from agentteams.errors import UnsafePathError
from agentteams.store import write_failures
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import encode, now_iso

REDACTED = "<redacted>"
LOCAL_ROW = "local"  # a prompt's `rowSource`: written by this machine's session (not synced in from elsewhere)
Entrypoint = Literal["cli", "sdk-cli"]
CompactTrigger = Literal["manual", "auto"]


@dataclass(frozen=True)
class AssistantMeta:
    """What the API said about one answer besides its content: kept on each of its entries as Claude Code does."""

    message_id: str
    model: str
    stop_reason: str | None
    usage: dict[str, Any]
    request_id: str | None = None


class Transcript:
    """Appends entries to one session file, keeping the chain's leaf; safe across threads of a process.

    `leaf` continues an existing chain (a resumed session appends to its own file, chained onto its old leaf).
    `agent_id` makes it a subagent's own file: every entry a sidechain naming that agent, its first prompt under
    `prompt_id` (the parent's turn that started it). Our own extra keys (`agent`, `team`) sit beside Claude Code's,
    which its reader ignores.
    """

    def __init__(
        self, path: Path, session_id: str, *, cwd: str, secrets: Sequence[str | None] = (), team: str | None = None,
        entrypoint: Entrypoint = "sdk-cli", leaf: str | None = None,
        mirror: Callable[[Path, dict[str, Any]], None] | None = None, agent_id: str | None = None,
        prompt_id: str | None = None,
    ) -> None:  # fmt: skip
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.team = team  # a teammate's team: how `agentteams logs` finds its transcript after it has exited
        self.entrypoint: Entrypoint = entrypoint
        self.git_branch = git_branch(Path(cwd))
        self._secrets = sorted({s for s in secrets if s and len(s) >= 8}, key=len, reverse=True)
        self._lock = threading.Lock()
        self._leaf = leaf
        self.agent_id = agent_id
        self._tool_uses: dict[str, str] = {}  # tool_use id -> uuid of the assistant entry that holds it
        self.prompt_id = prompt_id  # the turn's: its prompt and tool results carry it
        self.attribution: str | None = None  # a subagent's type: each of its answers names it, as Claude Code's do
        # `--session-mirror`: each entry also goes here as written (the Agent SDK's session store keeps a copy)
        self.mirror = mirror
        self._end_looked_at = False  # whether the file's last byte was checked (a torn line left by a crash)

    @property
    def leaf(self) -> str | None:
        """The newest entry of the conversation: where the next one (and a resume) chains on."""
        return self._leaf

    # -- chained entries ---------------------------------------------------------------------------------

    def prompt(self, agent: str, content: str | list[Any], *, mode: str | None = None, meta: bool = False) -> str:
        """A user message that starts (or, `meta`, feeds) a turn: what the person typed, a delivered message."""
        if self.agent_id is None or self._leaf is not None or self.prompt_id is None:  # a subagent's first: inherited
            self.prompt_id = str(uuidlib.uuid4())
        own: dict[str, Any] = {"promptId": self.prompt_id, "type": "user"}
        own["message"] = {"role": "user", "content": content}
        if meta:
            own["isMeta"] = True
        if mode is not None:
            own["permissionMode"] = mode
        if not meta and self.agent_id is None:  # when it was sent, and that it was typed here, as 2.1.332 stamps it
            own.update(sentAtMs=int(time.time() * 1000), rowSource=LOCAL_ROW)
        elif not meta:  # a subagent's prompt was never sent by a person: 2.1.332 marks it local, with no time
            own["rowSource"] = LOCAL_ROW
        return self._chained(agent, own)

    def assistant(
        self, agent: str, content: list[dict[str, Any]], meta: AssistantMeta, uuids: Sequence[str | None] = ()
    ) -> list[str]:
        """One API answer as Claude Code writes it: one entry per content block, each with the whole message's
        id, stop reason and usage (the reader joins them back by id). The entries' uuids (`uuids` gives a block's
        when it was named before the answer was whole: its stream-json line went out at its end)."""
        written = []
        for i, block in enumerate(content or [{"type": "text", "text": ""}]):
            own: dict[str, Any] = {"message": block_message(block, meta), "type": "assistant"}
            if meta.request_id:
                own["requestId"] = meta.request_id
            if self.attribution:
                own["attributionAgent"] = self.attribution
            entry_uuid = self._chained(agent, own, named=uuids[i] if i < len(uuids) else None)
            written.append(entry_uuid)
            if block.get("type") == "tool_use":
                self._tool_uses[str(block.get("id"))] = entry_uuid
        return written

    def tool_result(self, agent: str, block: dict[str, Any], detail: Any) -> str:
        """One tool result: a user entry of its own, linked to the assistant entry that asked for it; its uuid."""
        own: dict[str, Any] = {"promptId": self.prompt_id, "type": "user"}
        own["message"] = {"role": "user", "content": [block]}
        own["toolUseResult"] = detail
        source = self._tool_uses.pop(str(block.get("tool_use_id")), None)
        if source is not None:
            own["sourceToolAssistantUUID"] = source
        return self._chained(agent, own)

    def compacted(self, agent: str, summary: str, *, trigger: CompactTrigger, pre_tokens: int,
                  post_tokens: int | None = None, duration_ms: int | None = None) -> str:  # fmt: skip
        """A compaction: a boundary that starts a new chain (naming the old leaf), then the summary the
        conversation goes on from. The summary entry's uuid (the new leaf)."""
        old_leaf = self.leaf
        self._leaf = None
        metadata: dict[str, Any] = {"trigger": trigger, "preTokens": pre_tokens}
        if post_tokens is not None:
            metadata["postTokens"] = post_tokens
        if duration_ms is not None:
            metadata["durationMs"] = duration_ms
        boundary = {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                    "isMeta": False, "level": "info", "compactMetadata": metadata}  # fmt: skip
        self._chained(agent, boundary, logical_parent=old_leaf)
        own: dict[str, Any] = {"type": "user", "message": {"role": "user", "content": summary}}
        own.update(isVisibleInTranscriptOnly=True, isCompactSummary=True)
        return self._chained(agent, own)

    def branch_from(self, leaf: str | None) -> None:
        """Go on from the earlier entry `leaf` (a rewind): the next entry chains onto it, the later ones stay in the
        file off the chain; a `last-prompt` naming it keeps a resume there until then."""
        with self._lock:
            self._leaf = leaf
        self.last_prompt(None)

    # -- bookkeeping (not on the chain) --------------------------------------------------------------------

    def last_prompt(self, text: str | None) -> None:
        """Where the session ends for now (its leaf) and its newest prompt: what `-c`/`-r` and the picker read."""
        entry: dict[str, Any] = {"type": "last-prompt"}
        if text:
            entry["lastPrompt"] = text
        self._append({**entry, "leafUuid": self.leaf, "sessionId": self.session_id})

    def named(self, name: str) -> None:
        """The session's display name (`-n`), as Claude Code records it: its title and its agent name."""
        self._append({"type": "custom-title", "customTitle": name, "sessionId": self.session_id})
        self._append({"type": "agent-name", "agentName": name, "sessionId": self.session_id})

    def remember(self, tool: str, target: str | None, kind: str | None) -> None:
        """An "always" answer of the person for this session: replayed when it is resumed. A type of ours;
        Claude Code's reader skips types it does not know."""
        allow = {"tool": tool, "target": target, "kind": kind}
        self._append({"type": "agentteams-permission", "allow": allow, "sessionId": self.session_id})

    # -- writing -------------------------------------------------------------------------------------------

    def _chained(
        self, agent: str, own: dict[str, Any], logical_parent: str | None = None, named: str | None = None
    ) -> str:
        with self._lock:
            entry_uuid = named or str(uuidlib.uuid4())
            entry: dict[str, Any] = {"parentUuid": self._leaf}
            if own.get("subtype") == "compact_boundary":
                entry["logicalParentUuid"] = logical_parent
            entry["isSidechain"] = self.agent_id is not None
            if self.agent_id is not None:  # after the prompt id, as Claude Code orders a subagent's keys
                if "promptId" in own:
                    entry["promptId"] = own["promptId"]
                entry["agentId"] = self.agent_id
            entry.update(own)
            entry.update(uuid=entry_uuid, timestamp=now_iso(), userType="external", entrypoint=self.entrypoint)
            entry.update(cwd=self.cwd, sessionId=self.session_id, version=__version__, gitBranch=self.git_branch)
            entry["agent"] = agent
            if self.team:
                entry["team"] = self.team
            self._leaf = entry_uuid
            self._write(entry)
            return entry_uuid

    def _append(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self._write(entry)

    def _write(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, ensure_ascii=False, default=str)
        for secret in self._secrets:
            line = line.replace(secret, REDACTED)
        if not _persist[0]:  # --no-session-persistence: nothing on disk (a mirror still gets its copy)
            if self.mirror is not None:
                self.mirror(self.path, json.loads(line))
            return
        try:
            safe_paths.make_dir(self.path.parent, parents=True)
            fd = safe_paths.open_fd(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            try:
                data = encode(line) + b"\n"
                if not self._end_looked_at:  # a torn last line (a crash mid-write): ours starts on a line of its own
                    size = os.fstat(fd).st_size
                    data = b"\n" + data if size and os.pread(fd, 1, size - 1) != b"\n" else data
                    self._end_looked_at = True
                _write_line(fd, data)
            finally:
                os.close(fd)
        except (OSError, UnsafePathError) as e:  # a full or read-only disk, a planted link: the record is lost,
            # never the session (one warning)
            write_failures.failed("transcript", self.path, e)
        else:
            write_failures.succeeded("transcript")
        if self.mirror is not None:  # the redacted line, as the file holds it
            self.mirror(self.path, json.loads(line))


_persist = [True]  # this process's sessions are written to disk (-p --no-session-persistence: not)


def set_persist(on: bool) -> None:
    """Whether this process's transcripts are written at all (`--no-session-persistence`)."""
    _persist[0] = on


def _write_line(fd: int, data: bytes) -> None:
    """One write of a whole line, so a crash never leaves half an entry; a short write (the disk filled up) is
    cut back, so the next entry starts on a line of its own."""
    start = os.lseek(fd, 0, os.SEEK_END)
    try:
        view = memoryview(data)
        while view:  # a short write is followed by one that says why (ENOSPC, EFBIG)
            view = view[os.write(fd, view) :]
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise


def block_message(block: dict[str, Any], meta: AssistantMeta) -> dict[str, Any]:
    """One block of an answer as Claude Code writes (and streams) it: the API message around that block alone."""
    return {"id": meta.message_id, "type": "message", "role": "assistant", "model": meta.model, "content": [block],
            "stop_reason": meta.stop_reason, "stop_sequence": None, "usage": meta.usage}  # fmt: skip


def git_branch(cwd: Path) -> str:
    """The checked-out branch of the repository holding `cwd`, read from `.git/HEAD` (no git process); "HEAD"
    when detached or outside a repository, as Claude Code records it."""
    for folder in (cwd, *cwd.parents):
        dot_git = folder / ".git"
        try:
            if dot_git.is_file():  # a worktree: `gitdir: <path>`
                dot_git = (folder / dot_git.read_text().partition("gitdir:")[2].strip()).resolve()
            if dot_git.is_dir():
                head = (dot_git / "HEAD").read_text().strip()
                return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else "HEAD"
        except OSError:
            return "HEAD"
    return "HEAD"
