"""The mailbox's group commit: senders spool their messages beside the inbox, and whoever holds the inbox lock moves
every spooled one into it in one atomic rewrite (finishing a dead committer's in-flight batch first); an uncontended
sender writes its own message at once, without the spool."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentteams import diagnostics
from agentteams.errors import CorruptFileError, LockLostError
from agentteams.store.file.inbox_file import (
    append_to_array,
    array_bytes,
    array_prefix_end,
    check_inbox,
    in_flight_file,
    items_bytes,
    set_aside,
    spool_file,
)
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import atomic_write_bytes, atomic_write_spliced, encode, quarantine, read_bytes
from agentteams.store.fs.locking import FileLock, check_held, flock_exclusive, flock_release, flock_shared, lock_dir_for
from agentteams.store.records import Envelope

FULL_CHECK_BYTES = 64 * 1024  # below this an inbox is fully parsed before an append


def durable(inbox: Path) -> None:
    """Make the inbox's rename survive a power cut before the send returns: its temp file was fsynced before the
    rename, the directory entry is synced here, after the lock is released. The recipient saw the message at the
    rename already; a sender whose message another committed waits here for that commit's entry too."""
    try:
        safe_paths.sync_dir(inbox.parent)
    except OSError as e:  # delivered (the recipient may have read it), but the disk would not confirm it
        diagnostics.warning("could not sync %s (%s): the message is delivered, not yet on disk", inbox.parent, e)


def release(lock: FileLock) -> None:
    """Release after a commit; a failure (a full disk) must not report a delivered message as not sent."""
    try:
        lock.release()
    except OSError as e:
        diagnostics.warning("could not release the lock on %s (%s); it will be broken as stale", lock.target, e)


def spool_append(inbox: Path, record: bytes) -> None:
    path = spool_file(inbox)
    while True:
        with safe_paths.open_file(path, "ab") as spool:
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


def committed(inbox: Path, mine: bytes) -> bool:
    """Whether a spooled message (its quoted msg_id) has been committed to the inbox.

    Called first in the inbox lock's queue, so no commit is in progress: a message is committed once
    it has left the spool, unless a committer died holding it (its in-flight file is still there).
    """
    if in_flight_file(inbox).exists():
        return False
    try:
        with safe_paths.open_file(spool_file(inbox), "rb") as spool:
            return mine not in spool.read()
    except FileNotFoundError:
        return True


def flush_spool(inbox: Path, extra: list[Envelope] | None = None) -> None:
    """Move spooled envelopes, then `extra` (a sender's own, never spooled), into the inbox. Caller holds the lock."""
    in_flight = in_flight_file(inbox)
    recovered = in_flight.exists()  # a committer died between taking the spool and finishing
    took = recovered or take_spool(inbox)
    if not took and not extra:
        return
    envs = [*(spooled(read_bytes(in_flight) or b"") if took else []), *(extra or [])]
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
            atomic_write_bytes(inbox, appended(inbox, current, envs))
    if took:
        check_held()  # once our lock is broken, the in-flight file may be the next committer's
        in_flight.unlink()
    if recovered:
        flush_spool(inbox)


def take_spool(inbox: Path) -> bool:
    """Rename a non-empty spool to the in-flight file; True if there was one.

    The spool is locked only for the rename, so senders keep spooling while the inbox is rewritten
    and the next commit carries them all.
    """
    path = spool_file(inbox)
    try:
        spool = safe_paths.open_file(path, "rb")  # locked below, closed in finally
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


def spooled(raw: bytes) -> list[Envelope]:
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


def appended(inbox: Path, current: bytes, envs: list[Envelope]) -> bytes:
    if not current.strip():
        current = b"[]"  # caught between a creator's "wx" and its write
    elif len(current) <= FULL_CHECK_BYTES:
        current = pruned(inbox, current)
    new = append_to_array(current, envs)
    if new is None and len(current) > FULL_CHECK_BYTES:  # a large one torn at its end: its elements are saved
        new = append_to_array(pruned(inbox, current), envs)
    if new is None:
        aside = quarantine(inbox)
        diagnostics.warning("inbox %s was not a JSON array; moved it to %s and started a new one", inbox, aside)
        new = append_to_array(b"[]", envs)
        assert new is not None
    return new


def pruned(inbox: Path, current: bytes) -> bytes:
    """The inbox's array without its bad elements, which are kept beside it; b"garbage" when it is no array."""
    try:
        found = check_inbox(current, inbox)
    except CorruptFileError:
        return b"garbage"  # the caller moves the whole file aside
    if found.clean:
        return current
    set_aside(inbox, found)  # pruned here, as 2.1.330 prunes them, but kept beside the inbox
    return array_bytes(found.items)
