"""Running one answer's tool calls: in order, but neighbouring calls that may run side by side (reads, and the calls
that start subagents, as claude 2.1.332's concurrency-safe tools) run together, each checked, hooked and asked about
as it would be alone; the results keep the calls' order, and the answer's next request waits for all of them."""

from __future__ import annotations

from collections.abc import Callable

from agentteams.agent.subagent_run import TASK_TOOLS
from agentteams.model.types import Block
from agentteams.tools.spawn_limits import StartOrder

MAX_BESIDE = 10  # calls run at once, the rest queued: claude's default (its CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY)


def run_calls(uses: list[Block], run_one: Callable[[Block], Block], beside: Callable[[Block], bool]) -> list[Block]:
    """Each call's result block, in the calls' order; `beside(use)` says whether a call may run side by side."""
    results: list[Block] = []
    i = 0
    while i < len(uses):
        j = i + 1
        if beside(uses[i]):
            while j < len(uses) and beside(uses[j]):
                j += 1
        batch = uses[i:j]
        results.extend([run_one(batch[0])] if len(batch) == 1 else _side_by_side(batch, run_one))
        i = j
    return results


def _side_by_side(batch: list[Block], run_one: Callable[[Block], Block]) -> list[Block]:
    from concurrent.futures import ThreadPoolExecutor  # with logging, ~4 ms: only when calls run together

    order = StartOrder()  # the batch's subagent calls take the concurrency cap's slots in the answer's order
    places = {id(use): n for n, use in enumerate(u for u in batch if u.get("name") in TASK_TOOLS)}

    def one(use: Block) -> Block:
        place = places.get(id(use))
        if place is None:
            return run_one(use)
        with order.place(place):
            return run_one(use)

    with ThreadPoolExecutor(max_workers=min(MAX_BESIDE, len(batch))) as pool:
        return list(pool.map(one, batch))
