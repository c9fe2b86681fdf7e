"""A claiming process for the contract suite (`python -m tests.contract.claimer AGENT GO_FILE`): opens the store
AGENTTEAMS_STORE names (or the file store), waits for the go file, claims tasks until none is left and prints one
line per task it won."""

from __future__ import annotations

import os
import sys

from tests.support.wait import wait_until


def main() -> None:
    agent, go = sys.argv[1], sys.argv[2]
    from agentteams.store.files import open_store

    store = open_store()
    store.tasks.list_tasks("race")  # warm: the first claim is as fast as the rest
    wait_until(lambda: os.path.exists(go), 60.0, "the go file", interval=0.002)
    while (result := store.tasks.claim_next("race", agent)).success:
        assert result.task is not None
        print(f"won {result.task.id}", flush=True)


if __name__ == "__main__":
    main()
