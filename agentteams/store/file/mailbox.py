"""The mailbox store: one JSON-array inbox per agent, shared with Claude Code, never losing a message.

Sends are group-committed (spool, then one atomic rewrite by the lock holder); old delivered messages
move to an append-only history file so the live inbox stays small.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError, CorruptFileError, LockLostError, LockTimeoutError, NotFoundError
from agentteams.store.api import MAX_TEXT_CHARS, new_envelope
from agentteams.store.file import spool
from agentteams.store.file.inbox_file import (
    array_bytes,
    in_flight_file,
    parse_inbox,
    rejected_file,
    set_aside,
    spool_file,
    unread_only,
)
from agentteams.store.file.spool import FULL_CHECK_BYTES
from agentteams.store.file.teams import TeamStore
from agentteams.store.file.withdraw import failure, withdraw
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import atomic_write_bytes, dump_compact, dump_json, encode, quarantine, read_bytes
from agentteams.store.fs.locking import FileLock, ensure_file, run_locked
from agentteams.store.paths import Layout, agent_name, path_part, refuse_control
from agentteams.store.records import Envelope, TeamConfig

if TYPE_CHECKING:
    from agentteams.store.protocol import Message  # a hint: reading an inbox (`status`) needs no protocol classes

__all__ = ["FULL_CHECK_BYTES", "KEEP_DELIVERED", "Mailbox"]

KEEP_DELIVERED = 20  # delivered messages kept in the live inbox; older ones go to the history file
Sealer = Callable[[str, str, Envelope], None]  # (team, recipient, envelope about to be written)


class Mailbox:
    def __init__(self, layout: Layout | None = None, teams: TeamStore | None = None, seal: Sealer | None = None):
        self.layout = layout or Layout.from_env()
        self.teams, self.seal = teams or TeamStore(self.layout), seal  # seal: signing.Keyring.seal, or unsigned

    # -- sending ------------------------------------------------------------------------------------

    def resolve_recipient(self, config: TeamConfig, to: str) -> str:
        refuse_control(to, "recipient")
        member = config.member(to) or config.member(to.split("@", 1)[0])
        if member is None:
            names = ", ".join(m.name for m in config.members)
            raise NotFoundError(f"{to!r} is not a member of team {config.name!r} (members: {names})")
        return member.name

    def send(
        self, team: str, to: str, text: str, *, sender: str, summary: str | None = None,
        color: str | None = None,
    ) -> Envelope:  # fmt: skip
        """Append one message to a member's inbox; returns once it is durably in the inbox file."""
        if len(text) > MAX_TEXT_CHARS:
            raise AgentTeamsError(f"message is {len(text)} characters; the limit is {MAX_TEXT_CHARS}")
        diagnostics.stamp("send")
        refuse_control(sender, "sender")  # it is stored in the envelope as given
        config = self.teams.peek(team)
        name = self.resolve_recipient(config, to)
        if color is None and (member := config.member(sender)) and member.agent_id != config.lead_agent_id:
            color = member.color
        env = new_envelope(sender, text, summary=summary, color=color)
        if self.seal is not None:
            self.seal(config.name, name, env)
        self._commit(self.layout.inbox_file(config.name, name), env)
        diagnostics.stamp("sent")
        return env

    def send_message(self, team: str, to: str, message: Message, *, sender: str) -> Envelope:
        return self.send(team, to, message.to_text(), sender=sender)

    def broadcast(self, team: str, text: str, *, sender: str, summary: str | None = None) -> list[str]:
        """Send `text` to every member but the sender; returns the recipients."""
        config = self.teams.read(team)
        names = [m.name for m in config.members if sender not in (m.name, m.agent_id)]
        for name in names:
            self.send(config.name, name, text, sender=sender, summary=summary)
        return names

    def _commit(self, inbox: Path, env: Envelope) -> None:
        if not inbox.parent.parent.is_dir():
            raise NotFoundError(f"team directory {inbox.parent.parent} is gone")
        mine = encode(dump_compact(env.msg_id))
        lock = FileLock(inbox)
        held = done = False
        try:
            safe_paths.make_dir(inbox.parent)
            if held := lock.try_acquire():  # nobody holds or waits for the lock: ours goes in at once, unspooled
                done = self._commit_held(inbox, [env])
                if not done:
                    spool.release(lock)
                    held = False
            if not done:
                spool.spool_append(inbox, b"\n" + encode(dump_compact(env.to_json())) + b"\n")  # \n: a torn line alone
                ensure_file(inbox, b"[]")
                # Whoever holds the lock commits everything spooled. A sender whose message a previous holder
                # has already committed passes through without taking the mkdir lock or writing: the senders that
                # queued during one commit are all served by the next.
                while held := lock.acquire(unless=lambda: spool.committed(inbox, mine)):
                    if self._commit_held(inbox):
                        break
                    spool.release(lock)
                    held = False
        except (OSError, LockTimeoutError) as e:  # exact: a send that reports failure is never delivered
            outcome = withdraw(inbox, mine, holding_lock=held)
            if outcome != "delivered":
                raise failure(inbox, e, outcome, env.msg_id) from e
        finally:
            if held:
                spool.release(lock)
        spool.durable(inbox)

    def _commit_held(self, inbox: Path, own: list[Envelope] | None = None) -> bool:
        """Under the lock: the spooled messages and `own` into the inbox. False when the lock turned out to be broken
        (nothing of ours was written: the caller commits again on fresh data)."""
        try:
            diagnostics.stamp("locked")
            if own:
                spool.flush_spool(inbox, own)
            else:
                self._flush_spool(inbox)
            return True
        except LockLostError as e:
            diagnostics.warning("%s; committing again", e)
            return False

    def _flush_spool(self, inbox: Path) -> None:
        """Move spooled envelopes into the inbox. Caller holds the inbox lock."""
        spool.flush_spool(inbox)

    # -- reading ------------------------------------------------------------------------------------

    def inbox_path(self, team: str, agent: str) -> Path:
        return self.layout.inbox_file(self.teams.canonical(team), agent)

    def inbox_owner(self, agent: str) -> str:
        return path_part(agent_name(agent))  # the inbox file name's rule (paths.Layout.inbox_file)

    def inbox_owners(self, team: str) -> list[str]:
        """Every inbox or history file's agent under the team, sorted (hidden spool files left out)."""
        try:
            names = [p.name for p in self.layout.inbox_dir(self.teams.canonical(team)).iterdir()]
        except OSError:
            return []
        kept = (n for n in names if n.endswith((".json", ".history.jsonl")))
        stems = {n.removesuffix(".history.jsonl").removesuffix(".json") for n in kept}
        return sorted(s for s in stems if s and not s.startswith("."))

    def read_live(self, team: str, agent: str) -> list[Envelope]:
        """The messages now in the inbox file (a corrupt file, or element, is moved aside and reported)."""
        path = self.inbox_path(team, agent)
        raw = read_bytes(path)
        if raw is None:
            return []
        try:
            found = parse_inbox(raw, path)
            if found.clean:
                return found.envelopes
        except CorruptFileError:
            pass
        # to prune or quarantine, under the lock, as what was read may have changed
        return run_locked(path, lambda: self._load_locked(path))

    def unread(self, team: str, agent: str) -> list[Envelope]:
        path = self.inbox_path(team, agent)
        raw = read_bytes(path)
        if raw is None:
            return []
        fast = unread_only(raw, path)
        return fast if fast is not None else [e for e in self.read_live(team, agent) if e.unread]

    def history(self, team: str, agent: str) -> list[Envelope]:
        path = self.layout.history_file(self.teams.canonical(team), agent)
        raw = read_bytes(path) or b""
        return spool.spooled(raw)

    def read_all(self, team: str, agent: str) -> list[Envelope]:
        """History then live inbox, each message once."""
        seen: set[tuple[str, ...]] = set()
        out: list[Envelope] = []
        for env in [*self.history(team, agent), *self.read_live(team, agent)]:
            if env.identity not in seen:
                seen.add(env.identity)
                out.append(env)
        return out

    def _load_locked(self, path: Path) -> list[Envelope]:
        """The inbox's messages, its bad elements pruned into the rejects file. Caller holds the inbox lock."""
        raw = read_bytes(path)
        if raw is None:
            return []
        try:
            found = parse_inbox(raw, path)
        except CorruptFileError as e:
            aside = quarantine(path)
            atomic_write_bytes(path, b"[]")
            diagnostics.warning("%s; moved it to %s and started a new inbox", e, aside)
            return []
        if not found.clean:
            set_aside(path, found)
            atomic_write_bytes(path, array_bytes(found.items))
        return found.envelopes

    # -- delivery -----------------------------------------------------------------------------------

    def mark_delivered(self, team: str, agent: str, delivered: Iterable[Envelope]) -> int:
        """Mark these messages read (by identity, never index); archive old delivered ones. Returns count."""
        wanted = {e.identity for e in delivered}
        path = self.inbox_path(team, agent)
        if not wanted or not path.exists():
            return 0

        def mark() -> int:
            self._flush_spool(path)
            envs = self._load_locked(path)
            marked = 0
            for env in envs:
                if env.identity in wanted and env.unread:
                    env.read = True
                    marked += 1
            keep = self._archive(team, agent, envs)
            if marked or len(keep) != len(envs):
                atomic_write_bytes(path, encode(dump_json([e.to_json() for e in keep])))
            return marked

        return run_locked(path, mark)

    def _archive(self, team: str, agent: str, envs: list[Envelope]) -> list[Envelope]:
        """Append delivered messages beyond the newest KEEP_DELIVERED to the history; return the rest."""
        delivered = [i for i, e in enumerate(envs) if not e.unread]
        old = set(delivered[: max(0, len(delivered) - KEEP_DELIVERED)])
        if not old:
            return envs
        lines = b"".join(encode(dump_compact(envs[i].to_json())) + b"\n" for i in sorted(old))
        hist = self.layout.history_file(self.teams.canonical(team), agent)
        safe_paths.append_bytes(hist, lines)
        return [e for i, e in enumerate(envs) if i not in old]

    def remove_inbox(self, team: str, agent: str) -> None:
        path = self.inbox_path(team, agent)
        history = self.layout.history_file(self.teams.canonical(team), agent)
        for p in (path, spool_file(path), in_flight_file(path), rejected_file(path), history):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
