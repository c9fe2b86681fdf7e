"""The mailbox store: one JSON-array inbox per agent, shared with Claude Code, never losing a message.

Sends are group-committed (spool, then one atomic rewrite by the lock holder); old delivered messages
move to an append-only history file so the live inbox stays small.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError, CorruptFileError, LockLostError, LockTimeoutError, NotFoundError
from agentteams.store import safefs
from agentteams.store.atomicjson import (
    atomic_write_bytes,
    atomic_write_spliced,
    dump_compact,
    dump_json,
    encode,
    now_iso,
    quarantine,
    read_bytes,
)
from agentteams.store.inboxfile import (
    append_to_array,
    array_bytes,
    array_prefix_end,
    check_inbox,
    in_flight_file,
    items_bytes,
    parse_inbox,
    rejected_file,
    set_aside,
    spool_file,
)
from agentteams.store.locking import (
    FileLock,
    check_held,
    ensure_file,
    flock_exclusive,
    flock_release,
    flock_shared,
    lock_dir_for,
    run_locked,
)
from agentteams.store.paths import Layout, agent_name, path_part, refuse_control
from agentteams.store.protocol import Message
from agentteams.store.records import Envelope, TeamConfig
from agentteams.store.teams import TeamStore
from agentteams.store.withdraw import failure, withdraw

KEEP_DELIVERED = 20  # delivered messages kept in the live inbox; older ones go to the history file
FULL_CHECK_BYTES = 64 * 1024  # below this an inbox is fully parsed before an append
MAX_TEXT_CHARS = 8 * 1024 * 1024
Sealer = Callable[[str, str, Envelope], None]  # (team, recipient, envelope about to be written)


def new_envelope(sender: str, text: str, *, summary: str | None = None, color: str | None = None) -> Envelope:
    return Envelope(
        sender=sender, text=text, summary=summary, timestamp=now_iso(), color=color, msg_v=1,
        msg_id=str(uuid.uuid4()), type="message", read=False,
    )  # fmt: skip


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
        config = self.teams.read(team)
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
        held = False
        try:
            safefs.make_dir(inbox.parent)
            self._spool_append(inbox, b"\n" + encode(dump_compact(env.to_json())) + b"\n")  # \n isolates a torn line
            ensure_file(inbox, b"[]")
            # Whoever holds the lock commits everything spooled. A sender whose message a previous holder
            # has already committed passes through without taking the mkdir lock or writing: the senders that
            # queued during one commit are all served by the next.
            while held := lock.acquire(unless=lambda: self._committed(inbox, mine)):
                try:
                    diagnostics.stamp("locked")
                    self._flush_spool(inbox)
                    break
                except LockLostError as e:  # nothing of ours was written: commit again on fresh data
                    diagnostics.warning("%s; committing again", e)
                self._release(lock)
                held = False
        except (OSError, LockTimeoutError) as e:  # exact: a send that reports failure is never delivered
            outcome = withdraw(inbox, mine, holding_lock=held)
            if outcome != "delivered":
                raise failure(inbox, e, outcome, env.msg_id) from e
        finally:
            if held:
                self._release(lock)
        self._durable(inbox)

    @staticmethod
    def _durable(inbox: Path) -> None:
        """Make the inbox's rename survive a power cut before the send returns: its temp file was fsynced before the
        rename, the directory entry is synced here, after the lock is released. The recipient saw the message at the
        rename already; a sender whose message another committed waits here for that commit's entry too."""
        try:
            safefs.sync_dir(inbox.parent)
        except OSError as e:  # delivered (the recipient may have read it), but the disk would not confirm it
            diagnostics.warning("could not sync %s (%s): the message is delivered, not yet on disk", inbox.parent, e)

    @staticmethod
    def _release(lock: FileLock) -> None:
        """Release after a commit; a failure (a full disk) must not report a delivered message as not sent."""
        try:
            lock.release()
        except OSError as e:
            diagnostics.warning("could not release the lock on %s (%s); it will be broken as stale", lock.target, e)

    @staticmethod
    def _spool_append(inbox: Path, record: bytes) -> None:
        path = spool_file(inbox)
        while True:
            with safefs.open_file(path, "ab") as spool:
                flock_shared(spool)
                try:
                    # a committer may have taken this spool (renamed it) while we waited: append to the new one
                    try:
                        same = os.fstat(spool.fileno()).st_ino == os.stat(path).st_ino
                    except FileNotFoundError:
                        same = False
                    if same:
                        spool.write(record)
                        spool.flush()
                        return
                finally:
                    flock_release(spool)

    @staticmethod
    def _committed(inbox: Path, mine: bytes) -> bool:
        """Whether a spooled message (its quoted msg_id) has been committed to the inbox.

        Called first in the inbox lock's queue, so no commit is in progress: a message is committed once
        it has left the spool, unless a committer died holding it (its in-flight file is still there).
        """
        if in_flight_file(inbox).exists():
            return False
        try:
            with safefs.open_file(spool_file(inbox), "rb") as spool:
                return mine not in spool.read()
        except FileNotFoundError:
            return True

    def _flush_spool(self, inbox: Path) -> None:
        """Move spooled envelopes into the inbox. Caller holds the inbox lock."""
        in_flight = in_flight_file(inbox)
        recovered = in_flight.exists()  # a committer died between taking the spool and finishing
        if not recovered and not self._take_spool(inbox):
            return
        envs = self._spooled(read_bytes(in_flight) or b"")
        size = inbox.stat().st_size if inbox.exists() else 0
        keep = None if recovered or size <= FULL_CHECK_BYTES else array_prefix_end(inbox, size)
        if keep is not None and envs:
            # a large inbox is not read into memory: the kernel copies it, we write only the new tail; its
            # elements are checked when it is next read
            atomic_write_spliced(inbox, keep, b",\n  " + items_bytes(envs) + b"\n]")
        else:
            current = read_bytes(inbox) or b"[]"
            if recovered:  # it may have written the inbox before it died
                envs = [e for e in envs if e.msg_id is None or encode(e.msg_id) not in current]
            if envs:
                atomic_write_bytes(inbox, self._appended(inbox, current, envs))
        check_held()  # once our lock is broken, the in-flight file may be the next committer's
        in_flight.unlink()
        if recovered:
            self._flush_spool(inbox)

    @staticmethod
    def _take_spool(inbox: Path) -> bool:
        """Rename a non-empty spool to the in-flight file; True if there was one.

        The spool is locked only for the rename, so senders keep spooling while the inbox is rewritten
        and the next commit carries them all.
        """
        path = spool_file(inbox)
        try:
            spool = safefs.open_file(path, "rb")  # locked below, closed in finally
        except FileNotFoundError:
            return False
        try:
            flock_exclusive(spool)
            if os.fstat(spool.fileno()).st_size == 0:
                return False
            check_held()
            # link, not rename: an in-flight file another committer made after breaking our lock is never
            # replaced (FileExistsError, then our redo recovers it)
            try:
                os.link(path, in_flight_file(inbox))
            except FileExistsError as e:
                raise LockLostError(f"{in_flight_file(inbox)} appeared under our lock", str(lock_dir_for(inbox))) from e
            os.unlink(path)
            return True
        finally:
            flock_release(spool)
            spool.close()

    @staticmethod
    def _spooled(raw: bytes) -> list[Envelope]:
        envs = []
        for line in raw.split(b"\n"):
            if not line.strip():
                continue
            try:
                envs.append(Envelope.from_json(json.loads(line), "spooled message"))
            except (ValueError, CorruptFileError):
                # only a writer killed mid-append leaves a torn line, and its send never returned
                diagnostics.debug("dropping a torn spool line of %d bytes", len(line))
        return envs

    def _appended(self, inbox: Path, current: bytes, envs: list[Envelope]) -> bytes:
        if not current.strip():
            current = b"[]"  # caught between a creator's "wx" and its write
        elif len(current) <= FULL_CHECK_BYTES:
            current = self._pruned(inbox, current)
        new = append_to_array(current, envs)
        if new is None and len(current) > FULL_CHECK_BYTES:  # a large one torn at its end: its elements are saved
            new = append_to_array(self._pruned(inbox, current), envs)
        if new is None:
            aside = quarantine(inbox)
            diagnostics.warning("inbox %s was not a JSON array; moved it to %s and started a new one", inbox, aside)
            new = append_to_array(b"[]", envs)
            assert new is not None
        return new

    @staticmethod
    def _pruned(inbox: Path, current: bytes) -> bytes:
        """The inbox's array without its bad elements, which are kept beside it; b"garbage" when it is no array."""
        try:
            found = check_inbox(current, inbox)
        except CorruptFileError:
            return b"garbage"  # the caller moves the whole file aside
        if found.clean:
            return current
        set_aside(inbox, found)  # pruned here, as 2.1.330 prunes them, but kept beside the inbox
        return array_bytes(found.items)

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
        return [e for e in self.read_live(team, agent) if e.unread]

    def history(self, team: str, agent: str) -> list[Envelope]:
        path = self.layout.history_file(self.teams.canonical(team), agent)
        raw = read_bytes(path) or b""
        return self._spooled(raw)

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
        safefs.append_bytes(hist, lines)
        return [e for i, e in enumerate(envs) if i not in old]

    def remove_inbox(self, team: str, agent: str) -> None:
        path = self.inbox_path(team, agent)
        history = self.layout.history_file(self.teams.canonical(team), agent)
        for p in (path, spool_file(path), in_flight_file(path), rejected_file(path), history):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
