"""A contract-suite process (`python -m tests.contract.worker claim|join AGENT GO_FILE [COUNT]`): opens the store
AGENTTEAMS_STORE names (or the file store), waits for the go file, then claims tasks of team `race` until none is
left (one line per task won), or adds COUNT members `<AGENT>-<i>` to team `race` (one line per join)."""

from __future__ import annotations

import os
import sys

from tests.support.wait import wait_until


def main() -> None:
    command, agent, go = sys.argv[1:4]
    from agentteams.store.api import NewMember
    from agentteams.store.opener import open_store

    store = open_store()
    store.teams.read("race")  # warm: the first step is as fast as the rest
    with open(f"{go}.ready.{agent}", "w"):  # a test can start the race once every worker is here
        pass
    wait_until(lambda: os.path.exists(go), 60.0, "the go file", interval=0.002)
    if command == "join":
        for i in range(int(sys.argv[4])):
            print(f"joined {store.teams.add_member('race', NewMember(f'{agent}-{i}', cwd='/w')).name}", flush=True)
        return
    while (result := store.tasks.claim_next("race", agent)).success:
        assert result.task is not None
        print(f"won {result.task.id}", flush=True)


if __name__ == "__main__":
    main()
