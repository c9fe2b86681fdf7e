"""An idle teammate's look for work writes nothing it watches: its inbox read, the lease sweep and a claim that finds
nothing must not wake its own watcher, or every wake makes the next and an idle team spins a core."""

from __future__ import annotations

from agentteams.store.file.store import FileStore
from agentteams.store.paths import Layout
from tests.support.builders import team_with_members

TEAM = "quiet"


def test_looking_for_work_and_finding_none_wakes_nobody(layout: Layout) -> None:
    team_with_members(layout, TEAM, "alice", "bob")
    store = FileStore(layout)
    first = store.tasks.create(TEAM, "taken", "by alice")
    assert store.tasks.claim(TEAM, first.id, "alice").success
    done = store.tasks.create(TEAM, "done")
    store.tasks.update(TEAM, done.id, status="completed")
    store.tasks.create(TEAM, "waits for the first", blocked_by=[first.id])
    store.mail.send(TEAM, "bob", "hello", sender="team-lead")
    store.mail.mark_delivered(TEAM, "bob", store.mail.unread(TEAM, "bob"))
    with store.watch(TEAM, "bob", tasks=True) as watcher:
        for _ in range(3):  # the teammate's idle round (team/teammate/runtime.py: _next_work)
            assert store.mail.unread(TEAM, "bob") == []
            store.tasks.sweep_leases(TEAM)
            claim = store.tasks.claim_next(TEAM, "bob", check_busy=True)
            assert not claim.success
            # inotify queues an event during the call that caused it: no wait is needed to see one
            assert not watcher.wait(0), "looking for work changed a file the teammate watches"
        store.tasks.create(TEAM, "new work")  # and the watcher does see a real change
        assert watcher.wait(0)
