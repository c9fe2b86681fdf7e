"""The end of a team under a running lead: every teammate asked to stop, stragglers forced, the team deleted."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from agentteams.errors import NotFoundError

if TYPE_CHECKING:
    from agentteams.team.lead.runtime import LeadRuntime

JOIN_WAIT = 2.0  # seconds for the lead's team thread to end: four of its rounds


def disband(rt: LeadRuntime, timeout: float) -> list[str]:
    """Ask every teammate to stop, wait for each to leave (forcing stragglers), then delete the team."""
    team = rt.team
    if not team:
        return []
    rt.muted = True
    for name in list(rt.handles):
        rt.promises.ask_shutdown(rt.mailbox, team, name, "The team's work is finished.")
    deadline = time.monotonic() + timeout
    while rt.handles and time.monotonic() < deadline:
        rt.process_inbox()
        rt.check_liveness()
        time.sleep(0.05)
    for name in list(rt.handles):
        rt.member_gone(name, "was stopped (it did not answer the shutdown request in time)")
    rt.ctx.team_name = None  # stops the team thread: it must not rewrite the inbox while the team goes
    thread = rt.team_thread
    if thread is not None and thread is not threading.current_thread():
        thread.join(timeout=JOIN_WAIT)
    warnings: list[str] = []
    try:
        warnings = rt.teams.delete(team, force=True)
    except NotFoundError:
        pass
    except OSError as e:  # the team is down; what is left on disk is `agentteams cleanup`'s job
        warnings = [f"could not remove all of team {team}'s files: {e}"]
    return warnings
