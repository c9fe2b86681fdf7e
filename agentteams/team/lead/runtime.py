"""Lead runtime: runs the lead's turns, delivers its inbox, spawns teammates and sees them leave or die.
User prompts and teammate messages that arrive while a turn runs go in at its next tool result (else they start the
next turn); idle notices only update the team view, unless the whole team has gone idle."""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentteams import diagnostics
from agentteams.agent.loop import AgentEvent, TurnResult
from agentteams.agent.session import Session, TurnExtras
from agentteams.backends.tmux import current_pane
from agentteams.errors import AgentTeamsError, PromptBlocked
from agentteams.model.types import Block
from agentteams.store import signing, write_failures
from agentteams.store.outages import StoreUnavailable, judged
from agentteams.store.paths import LEAD_NAME
from agentteams.store.presence import State
from agentteams.store.protocol import PermissionRequest
from agentteams.team import heartbeat
from agentteams.team.budget import BudgetLead, BudgetWatch
from agentteams.team.delivery import TeamEvent, team_idle
from agentteams.team.lead import permission_relay
from agentteams.team.lead.departures import Departures
from agentteams.team.lead.inbox import LeadInbox
from agentteams.team.lead.live_changes import LiveChanges
from agentteams.team.lead.permission_relay import PermissionJudge
from agentteams.team.lead.restarts import HINT, Restarts
from agentteams.team.lead.store_loss import StoreLoss, unreachable_notice
from agentteams.team.lead.turn_queue import TurnQueue
from agentteams.team.lease_keeper import LeaseKeeper
from agentteams.team.spawn.base import Handle, Spawner
from agentteams.team.spawn.member import spawn_member
from agentteams.team.spawn.roster import Roster, release_member
from agentteams.team.steering import Carried, lead_blocks
from agentteams.team.team_hooks import LeadHooks
from agentteams.team.trust import LeadPromises, Trust
from agentteams.team.turns_owed import TurnsOwed
from agentteams.tools.base import ToolInputError

if TYPE_CHECKING:
    from agentteams.store.api import Waiter
    from agentteams.team.lead.adopt import Adopted

JOIN_WAIT = 2.0  # seconds for the lead's team thread to end when the team is disbanded: four of its rounds
CHECK_EVERY = 0.5  # seconds between the team thread's looks; 4x that while pidfds watch all teammates (team_wait.py)


class LeadRuntime:
    """Owns the lead's worker thread (turns) and team thread (inbox, liveness)."""

    def __init__(
        self, session: Session, spawner: Spawner, *, on_team_event: Callable[[TeamEvent], None] | None = None,
        judge: PermissionJudge | None = None, on_turn_end: Callable[[TurnResult | None], None] | None = None,
    ) -> None:  # fmt: skip
        self.session = session
        self.ctx = session.ctx
        self.store = session.store
        self.spawner = spawner
        self.mailbox = self.store.mail
        self.teams = self.store.teams
        self.tasks = self.store.tasks
        self._team_event = self.hooks = LeadHooks(session, on_team_event)  # events reach the UI, then hooks
        self._on_turn_end = on_turn_end or (lambda _r: None)
        self.judge = judge
        self.remembered = permission_relay.Remembered()  # "don't ask again" answers to teammates' questions
        # their questions are put to the person off the team thread, and withdrawn when the teammate is gone
        self.asks = permission_relay.TeammateAsks(session, judge, self.remembered, self._answered)
        self.handles: dict[str, Handle] = {}
        self.owed = TurnsOwed()  # what settled() saw each teammate take from its inbox
        self.roster = Roster(self.store, spawner, self.handles)  # spawns check and reserve names through it
        self.restarts = Restarts(session, spawner, self.handles, self.hooks, self.on_team_thread)
        # what waits for the model, and whether a turn runs (the worker waits on its condition)
        self._queue = TurnQueue(lambda: team_idle(self.teams, self.team, self.handles))
        self._carried = Carried(self.mailbox, LEAD_NAME, lambda: self.team)  # teammates' messages the model has
        self.last_error: AgentTeamsError | None = None
        self._threads: list[threading.Thread] = []
        self.team_thread: threading.Thread | None = None
        self._team_waiter: Waiter | None = None  # the team thread's watch, woken by close so it ends at once
        pane = current_pane() or ""
        self._presence = heartbeat.LeadPresence(self.store, self.ctx.session_id, pane)  # beaten by the team thread
        self._leases = LeaseKeeper(self.tasks, LEAD_NAME, self.store.steady)  # renewed and swept by the team thread
        self.trust = Trust(role="lead")  # entries claiming the lead's own voice, or a keyed member's, are checked
        self.promises = LeadPromises()
        # a store back from an outage without the team, or one that stays away past its limit: the team ends
        self._loss = StoreLoss(self.store, spawner, self.handles, forget=self._forget, ended=self._team_ended)
        self._inbox = LeadInbox(
            self.mailbox, self.teams, self._queue, team=lambda: self.team, trust=self.trust, promises=self.promises,
            roster=self.roster, asks=self.asks, on_event=self._team_event, member_gone=self.member_gone,
        )  # fmt: skip
        gone = functools.partial(self.member_gone, died=True)  # past its budget's grace: stopped as a dead one
        self.changes = LiveChanges(self.restarts, lambda: self.team)  # the model's and `agentteams set`'s
        self.chores: list[Callable[[str], None]] = [self.changes.chore]
        self._budget = BudgetWatch(self.store, session.options.settings, BudgetLead(self.tell, self.promises, gone))
        self.ctx.hooks.spawn_teammate = self.spawn_teammate
        self.ctx.hooks.shutdown_sent = self.promises.shutdown_sent
        self.ctx.hooks.plan_digest = self.promises.plan_digest
        self.departures = Departures()  # teammates' processes ending: TeamDelete and shutdown_team wait for them
        self.ctx.hooks.await_departures = self.departures.wait
        session.listen(self._on_agent_event)
        session.listen(self._carried.heard)  # marked read once a model request has carried them
        session.agent.steer = self._steer

    # -- public -------------------------------------------------------------------------------------

    @property
    def team(self) -> str | None:
        return self.ctx.team_name

    @property
    def busy(self) -> bool:
        return self._queue.busy

    def resume_team(self) -> Adopted | None:
        """Before `start`: lead the resumed session's team again (live members adopted, dead ones revived), or None."""
        from agentteams.team.lead import adopt  # a resumed lead's only: off a new session's start

        claimed = adopt.claim(self.store, self.ctx.session_id)
        if claimed is None:
            return None
        if claimed.last_seen_ms:  # what was sent to the dead lead is as fresh as if it had lived
            self.trust.started_ms = min(self.trust.started_ms, claimed.last_seen_ms)
        config = claimed.config
        self.ctx.team_name, self.ctx.is_lead, self.ctx.agent_name = config.name, True, LEAD_NAME
        done, rekeying = adopt.take_team(self.restarts, self.mailbox, self.promises, config)
        if rekeying.waiting:
            self.chores.append(rekeying.tick)
        self.tell(TeamEvent("notice", LEAD_NAME, done.news()))
        return done

    def hold_until_first_prompt(self) -> None:
        """Before `start`: teammates' news waits for a first prompt (a team file's instructions come first)."""
        self._queue.held = True

    def start(self) -> None:
        worker = threading.Thread(target=self._work, name="lead-turns", daemon=True)
        worker.start()
        self._threads.append(worker)
        if self.team:
            self._start_team_thread()

    def submit(self, prompt: str, extras: TurnExtras | None = None) -> None:
        """Queue a user prompt (`extras` hold for its turn); it starts a turn at once when the lead is idle."""
        self._queue.prompt(prompt, extras)

    def between_turns(self, command: str, change: Callable[[], str]) -> str:
        """Change the conversation (/clear, /resume) with the team kept; refused while a turn runs."""
        return self._queue.between_turns(command, change)

    def on_team_thread(self) -> bool:
        return threading.current_thread() is self.team_thread

    def interrupt(self) -> None:
        self.ctx.interrupt.set()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no turn runs and nothing is queued for the model."""
        return self._queue.wait_quiet(timeout)

    def wait_change(self, timeout: float) -> None:
        """Sleep until the runtime's state changes (a turn ends, a message or notice arrives) or `timeout` passes."""
        self._queue.wait_change(timeout)

    def members(self) -> list[str]:
        return list(self.handles)

    def settled(self) -> bool:
        """Nothing will happen without the user: no turn, nothing queued, every teammate idle or gone."""
        with self._queue.cond:  # held throughout: a shutdown's approval and departure are one step under it
            if not self._queue.quiet():
                return False
            if not judged(self.store.steady, 2 * heartbeat.interval() + 1.0):  # teammates' writes it refused, held
                return False  # (an isActive), are written again at their next beats: idle is no verdict until then
            try:
                # nobody has a message waiting, nor owes the turn for one it took
                idle = team_idle(self.teams, self.team, self.handles, self.mailbox, self.owed)
            except StoreUnavailable:  # what the team does is unknown until the store is back
                return False
            return idle and not self.promises.awaiting(list(self.handles))  # nor a stop request to answer yet

    def shutdown_team(self, timeout: float = 60.0) -> list[str]:
        """Ask every teammate to stop, wait for each to leave (forcing stragglers), then delete the team."""
        team = self.team
        if not team:
            return []
        self._queue.muted = True
        for name in list(self.handles):
            self.promises.ask_shutdown(self.mailbox, team, name, "The team's work is finished.")
        deadline = time.monotonic() + timeout
        while self.handles and time.monotonic() < deadline:
            self._inbox.process()
            self.check_liveness()
            time.sleep(0.05)
        for name in list(self.handles):
            self.member_gone(name, "was stopped (it did not answer the shutdown request in time)")
        self.ctx.team_name = None  # stops the team thread: it must not rewrite the inbox while the team goes
        thread = self.team_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=JOIN_WAIT)
        self.departures.wait()  # what has left may still be writing its last words into the team's files
        from agentteams.team.lead.team_removal import remove_team  # git's view of worktrees: only when a team goes

        return remove_team(self.teams, team, self.session.options.cwd)

    def close(self) -> None:
        self._queue.close()
        if (waiter := self._team_waiter) is not None:
            waiter.wake()  # sticky: a round between its closing check and its wait ends at once too
        self.ctx.interrupt.set()
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(timeout=5)
        for name, handle in list(self.handles.items()):
            with contextlib.suppress(Exception):
                self.spawner.stop(handle)
            self.handles.pop(name, None)

    # -- spawning -----------------------------------------------------------------------------------

    def spawn_teammate(self, args: dict[str, Any]) -> str:
        """The Task tool with `name`: register the member, queue its prompt, start its process or thread."""
        if not self.team:
            raise ToolInputError("There is no team yet: create one with TeamCreate before spawning teammates.")
        if args.get("resume") is True:  # a teammate that died, with its own conversation (team/lead/restarts.py)
            return self.restarts.revive(self.team, args)
        spawned = spawn_member(self.session, self.spawner, self.team, args, self.roster)
        if spawned.handle is not None:  # else a retried or repeated call, answered with the live member: no news
            self._team_event(
                TeamEvent("joined", spawned.member.name, str(self.spawner.backend), color=spawned.member.color)
            )
        return spawned.tool_result(self.team)

    # -- the worker: one turn at a time -------------------------------------------------------------

    def hear(self, text: str) -> None:
        """Text from another session for the model: a turn of its own when idle, else after the next tool result."""
        self._queue.hear(text)

    @property
    def idle(self) -> bool:
        """No turn runs and nothing waits to start one."""
        return self._queue.quiet()

    def _work(self) -> None:
        while True:
            taken = self._queue.next_turn()
            if taken is None:  # closed
                return
            turn, idle, heard = taken.turn, taken.idle, taken.heard
            result: TurnResult | None = None
            self._write_presence("working")
            self._carried.envs = list(turn.envs or [])
            try:  # a UserPromptSubmit hook's answer may end the turn before it starts (HookAnswerError)
                text, blocked = self.hooks.turn_text(turn.notices or [], [*(turn.envs or []), *idle], turn.prompt)
                if heard:  # another session's words: not the person's prompt, so no UserPromptSubmit hook sees them
                    text = "\n\n".join([*heard, *([text] if text else [])])
                self.last_error = PromptBlocked(blocked) if blocked else None
                result = self.session.run(text, turn.extras) if text is not None else None
            except AgentTeamsError as e:  # e.g. the API refused: the caller shows it (one line)
                self.last_error = e
            except Exception as e:  # a bug must not kill the worker silently: the lead would never answer again
                self.last_error = AgentTeamsError(f"the turn failed: {type(e).__name__}: {e}")
                diagnostics.warning("the lead's turn failed: %s: %s", type(e).__name__, e)
            finally:
                self._carried.mark()
                self._queue.turn_ended()
                self._write_presence("idle")
                self._on_turn_end(result)

    def _steer(self) -> list[Block]:
        """At a tool result of a running turn: what came meanwhile goes in after the results (team/steering.py)."""
        came = self._queue.meanwhile()
        peers: list[Block] = [{"type": "text", "text": t} for t in came.heard]
        return [*peers, *lead_blocks(self.hooks, self._carried, came.notices, came.envs, came.prompts)]

    def _on_agent_event(self, event: AgentEvent) -> None:
        self._presence.saw(event)
        if event.kind == "tool_end" and event.tool == "TeamCreate" and event.result and not event.result.is_error:
            self._start_team_thread()

    # -- the team thread: inbox and liveness --------------------------------------------------------

    def _start_team_thread(self) -> None:
        if self.team_thread is not None and self.team_thread.is_alive():
            return
        team = self.team
        assert team is not None
        signing.warm_up_soon()  # before the first spawn needs it; a session that leads no team never loads it
        record = functools.partial(self._record_key, team)  # on the team thread, or before a first send if sooner
        self.store.keyring.adopt(team, LEAD_NAME, record)
        self._write_presence("working" if self._queue.running else "idle")
        self.team_thread = threading.Thread(target=self._watch_team, args=(team,), name="lead-team", daemon=True)
        self.team_thread.start()
        self._threads.append(self.team_thread)

    def _write_presence(self, state: State) -> None:
        session = self.session
        self._presence.write(self.team, state, self.ctx.session_id, session.ledger.total(), session.context_use())

    def _record_key(self, team: str, public: str) -> None:
        with contextlib.suppress(AgentTeamsError):
            self.teams.set_member_fields(team, LEAD_NAME, verify_key=public)

    def _watch_team(self, team: str) -> None:
        from agentteams.team.lead import team_wait  # once a team exists: off a session's start

        self.store.keyring.recorded(team, LEAD_NAME)
        with self.store.watch(team, LEAD_NAME) as files, team_wait.TeamWait(files, self.handles) as watcher:
            self._team_waiter = files
            while not self._queue.closing and self.team == team:
                try:
                    if self._loss.lost(team):
                        self._loss.end_lost(team)
                        break
                    self._inbox.process()
                    self.check_liveness()
                    self._budget.tick(team, list(self.handles))
                    for event in [*self._presence.beat(team, list(self.handles)), *self._leases.tick(team)]:
                        self._team_event(event)
                    for chore in self.chores:
                        chore(team)
                    self._loss.answered()
                except StoreUnavailable as e:  # the store said so once; liveness waits for it (store/outages.py)
                    diagnostics.debug("team %s: %s", team, e)
                    if self._loss.gave_up():  # not for ever: the lead (a -p run) ends
                        self._loss.end(team, unreachable_notice(team, e))
                        break
                except AgentTeamsError as e:
                    if self.team != team or not self.teams.exists(team):
                        break  # TeamDelete removed it while this round ran: nothing to warn about
                    diagnostics.warning("team %s: %s", team, e)
                except OSError as e:  # a full or read-only disk: one warning, and the lead keeps answering
                    write_failures.failed("team files", f"of team {team}", e)
                try:
                    watcher.wait(CHECK_EVERY, stretch=not self._budget.watching)
                except StoreUnavailable:  # it fails at once until the store is back: one round per CHECK_EVERY
                    time.sleep(CHECK_EVERY)
            self._team_waiter = None
        self.store.presence.remove(team, LEAD_NAME)

    def _answered(self, who: str, msg: PermissionRequest, allow: bool) -> None:
        self._team_event(TeamEvent("permission", who, f"{msg.tool_name}: {'allowed' if allow else 'denied'}"))

    def check_liveness(self) -> None:
        team = self.team
        if not team:
            return
        with self._inbox.lock:
            dead = [n for n, h in list(self.handles.items()) if not self.spawner.alive(h, team)]
            lost = bool(dead) and self._loss.lost(team)  # looking reconnected to a store back without the team
            if dead and not lost:
                self._inbox.process()  # an approval written just before exiting is not a death
            for name in [] if lost else dead:
                if name in self.handles:
                    self.member_gone(name, "stopped unexpectedly (its process or pane is gone)", died=True)
        if lost:  # those deaths are the store's loss; said outside the inbox lock (ending takes the queue's condition)
            self._loss.end_lost(team)

    def _team_ended(self, text: str) -> None:
        """Its store lost the team (store_loss.py): no team is led any more, and the model hears why."""
        self.ctx.team_name = None
        self._queue.team_ended(text)

    def _forget(self, name: str) -> None:
        """A teammate gone: its beats and the shutdown asked of it are no longer watched."""
        self._presence.forget(name)
        self.promises.forget(name)

    def tell(self, event: TeamEvent) -> None:
        """Something the person and the lead's model both hear of (a budget warning, a resume's news)."""
        self._queue.notice(event.text)  # the model's notice first: once the person sees it, the lead's turn is due
        self._team_event(event)

    def member_gone(self, name: str, how: str, *, died: bool = False) -> None:
        """Unassign its tasks, drop it from the team, close its pane, and tell the model."""
        team = self.team
        withdrawn = self.asks.withdraw(name)  # never a person's yes to a command for a teammate that is gone
        handle = self.handles.pop(name, None)
        self._forget(name)
        if team:
            self.store.keyring.drop_lead_key(team, name)
        if handle is not None:
            self.departures.note(handle)
            with contextlib.suppress(Exception):
                self.spawner.stop(handle)
        if not team:
            return
        moved = release_member(self.store, team, name, died=died, hooks=self.session.hooks)  # and its worktree
        notice = f"Teammate {name} {how}." + (f" {HINT}" if died else "") + moved.note
        if moved.tasks:
            notice += " Its unfinished tasks are pending again: " + ", ".join(f"#{t.id}" for t in moved.tasks)
        if withdrawn:
            notice += " Its permission request was withdrawn: " + ", ".join(m.tool_name for m in withdrawn) + "."
        self._team_event(TeamEvent("died" if died else "left", name, notice))
        self._queue.gone(name, notice)
