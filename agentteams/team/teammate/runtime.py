"""Teammate runtime: turn → idle notice to the lead → wait on the inbox → wake → next turn, until shut down.
Wakes on shutdown requests first, then the lead's messages, then peers', else claims the next open task."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any

from agentteams import diagnostics
from agentteams.agent import workers
from agentteams.agent.loop import AgentEvent
from agentteams.agent.prompts import claim_prompt
from agentteams.agent.session import Session, SessionOptions
from agentteams.errors import AgentTeamsError, NotFoundError
from agentteams.model.types import Block, ModelClient
from agentteams.store import write_failures
from agentteams.store.api import Store
from agentteams.store.fs.watch import WakeEvent, wait_in_slices
from agentteams.store.outages import AwayClock, StoreUnavailable
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.presence import Presence, State
from agentteams.store.protocol import (
    CompactRequest,
    PlanApprovalResponse,
    ShutdownRequest,
    parse_message,
)
from agentteams.store.records import Envelope, TeamConfig
from agentteams.store.signing import LeadVerifyKey
from agentteams.team import heartbeat
from agentteams.team.budget import held
from agentteams.team.delivery import TeamEvent, mark_read, message_block, wake_order
from agentteams.team.lease_keeper import LeaseKeeper
from agentteams.team.steering import steerable, teammate_blocks
from agentteams.team.teammate.budget_stop import BudgetStop
from agentteams.team.teammate.idle_gate import until_idle_allowed
from agentteams.team.teammate.lead_watch import LeadWatch
from agentteams.team.teammate.live_changes import LiveChanges
from agentteams.team.teammate.next_turn import TurnNotes, Work
from agentteams.team.teammate.permission_ask import LeadPermission
from agentteams.team.teammate.plan_verdict import pending_plan, take_verdict
from agentteams.team.teammate.to_lead import ToLead
from agentteams.team.trust import Trust
from agentteams.tools.team.team_tools import parse_send

WAIT_SLICE = 0.5  # seconds between checks of a plain stop flag while waiting; the inbox itself wakes at once
IDLE_SLICES = 20  # unwoken, an idle teammate re-reads the team's files every 10 s (its stop flag wakes it at once)
PERMISSION_TIMEOUT = 600.0
MARK_AFTER = 0.05  # seconds, at most, a message turn's state writes wait for its request to leave (off its path)


class TeammateRuntime:
    """Runs one teammate until a shutdown is approved, its team goes away, or `stop` is set."""

    def __init__(
        self,
        options: SessionOptions,
        client: ModelClient,
        *,
        layout: Layout,
        store: Store | None = None,
        backend: str,
        pane_id: str = "",
        stop: threading.Event | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
        on_team_event: Callable[[TeamEvent], None] | None = None,
        secrets: tuple[str | None, ...] = (),
        permission_timeout: float = PERMISSION_TIMEOUT,
        lead_key: LeadVerifyKey | None = None,
    ) -> None:
        if options.identity is None:
            raise AgentTeamsError("a teammate needs --agent-name and --team-name")
        self.me = options.identity
        self.team, self.name = options.identity.team, options.identity.name
        self.stop = stop or WakeEvent()  # setting it ends an idle wait at once (store/fs/watch.py)
        self._outer = on_event or (lambda _e: None)
        self._team_event = on_team_event or (lambda _e: None)
        self.session = Session(
            options, client, layout=layout, store=store, on_event=self._on_agent_event, secrets=secrets
        )
        if backend == "in-process":  # as claude's, which shares its lead's connected servers: its first request
            self.session.mcp.start_now()  # offers their tools (a pane teammate is an interactive session: no wait)
        self.store = self.session.store
        self.mailbox = self.store.mail
        self.teams = self.store.teams
        self.tasks = self.store.tasks
        self.session.agent.steer = self._steer  # team/steering.py
        self.ctx = self.session.ctx
        # with a key from the lead, only its signed messages carry its authority (Claude Code 2.1.330's rule)
        self.trust = Trust(role="teammate", lead_key=lead_key)
        self._shutdowns: set[str] = set()  # ids of the shutdown requests our lead really sent
        self.ctx.hooks.shutdown_requested = self._shutdowns.__contains__
        # everything we write is signed; the key is recorded at the first turn, or before a first send if sooner
        self.store.keyring.adopt(self.team, self.name, self._record_key)
        self._held = False  # has a budget of its own (team/budget.py): its spending is written at once
        if options.plan_mode_required:
            self.session.policy.mode = "plan"
        record = Presence(pid=os.getpid(), session_id=options.session_id, backend=backend, pane_id=pane_id)
        if options.resume is not None and (asked := pending_plan(self.mailbox, self.team, self.name, LEAD_NAME)):
            self.ctx.signals.awaiting_plan_approval, self.ctx.signals.plan_digest = asked  # restarted while it waited
            record.state = "awaiting_plan_approval"
        self._own = heartbeat.OwnPresence(functools.partial(self.store.presence.write, self.team, self.name), record)
        self._leases = LeaseKeeper(self.tasks, self.name, self.store.steady)  # its tasks' leases ride on its beats
        self.presence = self._own.record
        self._notes = TurnNotes()
        self._pending: list[Envelope] = []
        self._unmarked: set[tuple[str, ...]] = set()  # delivered, but the disk would not take the read marks
        # the lead's mode and model changes, and the mode a plan's approval leaves it in
        self.changes = LiveChanges(
            self.session, self.mailbox, self.teams, self.team, self.name, self.trust, self._unmarked
        )
        self._answering = threading.Event()  # the turn's first answer began: its request is out
        self._lead = LeadWatch(self.store, self.team)  # a dead lead may be resumed: we wait for it a while
        self._to_lead = ToLead(self.me, self.mailbox, self.teams)  # what a full disk refused of it is held there
        # a tool call that needs approval is asked of the lead; its wait looks at the stop flag every WAIT_SLICE
        self.session.agent.ask = LeadPermission(
            self.store, self.team, self.name, self.trust, send=self._to_lead.send, config=self._config,
            asking=lambda on: self._own.write(asking=on), stop=self.stop, interrupt=self.ctx.interrupt,
            timeout=permission_timeout, every=WAIT_SLICE,
        )  # fmt: skip
        settings = self.session.options.settings
        self._budget = BudgetStop(self.store, self.team, self.presence, settings, self.session.agent.over_budget)
        self.session.agent.over_budget = self._budget  # after every answer: a 60-call turn stops at its budget

    # -- the loop -----------------------------------------------------------------------------------

    def run(self) -> int:
        """Serve turns until told to stop; the exit code is 0 after an approved shutdown."""
        announced = False  # the first presence write waits until there is nothing to do: off the spawn path
        stop_beating = heartbeat.HEARTBEAT.add(self._beat)
        try:
            with self.store.watch(self.team, self.name, tasks=True) as watcher:
                while not self.stop.is_set():
                    self._own.came_round()
                    self._to_lead.held.retry()  # what a full disk refused, once it has room: the lead waits on it
                    config = self._config()
                    diagnostics.stamp("config")
                    entry = config.member(self.name) if config is not None else None
                    if config is None or entry is None:
                        diagnostics.debug("%s: no longer in team %s; stopping", self.name, self.team)
                        return 0
                    if self._lead.state(config) == "over":  # it finished its turn and waited the grace period
                        diagnostics.warning("%s: the lead of team %s did not come back; stopping", self.name, self.team)
                        return 0
                    self._held = held(entry)
                    self._budget.update(entry, config)
                    work = self._work_unless_away(config)
                    if work is None:
                        # started again idle (a resumed lead's restart marks it active first): only it says it is
                        # idle, else its lead waits for it for ever. Not on a new one's first look: its prompt may
                        # still be on its way, and this write would sit in the first delivery's path
                        if entry.is_active and (announced or self.session.options.resume is not None):
                            self._to_lead.set_active(False)
                        if not announced:
                            self._set_state(self.presence.state if self.presence.state != "starting" else "idle")
                            announced = True
                        wait_in_slices(watcher, self.stop, WAIT_SLICE, 2 if self._to_lead.held.pending else IDLE_SLICES)
                        continue
                    announced = True
                    if self._turn(work):
                        return 0
            return 0
        finally:
            stop_beating()
            self._own.write(state="exited")  # `status` shows it gone, not idle
            self.session.end("other")

    def _beat(self) -> None:
        """Presence and leases; and what a store away refused (its isActive), while a long turn keeps the loop."""
        self._leases.riding(self._own.beat, self.team)()
        self._to_lead.held.retry_soon()

    def pane_attached(self, pane_id: str) -> None:
        """Started before its pane: the pane's id, in the presence record at once (from the launcher's thread)."""
        self._own.update(pane_id=pane_id)

    def _config(self) -> TeamConfig | None:
        """The team's config; None once the team is gone (or the teammate told to stop while its store is away)."""
        away = AwayClock()
        while True:
            try:
                return self.teams.peek(self.team)  # looked at only: a wake-up parses the config only when it changed
            except NotFoundError:
                return None
            except StoreUnavailable as e:  # the store said so, once: waited for, as a teammate is not judged meanwhile
                if away.failed():
                    diagnostics.warning("%s: %s; stopping", self.name, e)
                    return None
                if self.stop.wait(WAIT_SLICE):
                    return None

    def _work_unless_away(self, config: TeamConfig) -> Work | None:
        try:
            return self._next_work(config)
        except StoreUnavailable:  # nothing to do until it is back: the idle wait, then `_config` waits for it
            return None

    def _next_work(self, config: TeamConfig) -> Work | None:
        unread = [e for e in self.mailbox.unread(self.team, self.name) if e.identity not in self._unmarked]
        diagnostics.stamp("inbox")
        if unread:
            rendered = [
                (e, self._render(e, config)) for e in wake_order(self._judged(unread, config), config.lead_name)
            ]
            dropped = [e for e, text in rendered if text is None]
            if dropped:  # frames nothing here can take (a stray plan verdict): delivered, never shown
                self._pending = dropped
                self._deliver()
            kept = [(e, text) for e, text in rendered if text is not None]
            if kept:
                return Work("\n\n".join(text for _, text in kept), [e for e, _ in kept])
        if self.ctx.signals.awaiting_plan_approval:
            return None  # no new work until the lead has answered the plan
        try:
            self._leases.sweep(self.team)  # a task whose owner stopped renewing is claimable again
            claim = self.tasks.claim_next(self.team, self.name, check_busy=True)
        except OSError as e:  # a full or read-only disk: no task can be taken now; messages still can
            write_failures.failed("team files", f"of team {self.team}", e)
            return None
        if claim.success and claim.task is not None:
            t = claim.task
            self._leases.renew(self.team)  # its lease starts with the claim, not at the next beat
            self._team_event(TeamEvent("claimed", self.name, f"#{t.id} {t.subject}", color=self.me.color))
            return Work(claim_prompt(t.id, t.subject, t.description), task_id=t.id)
        return None

    def _steer(self) -> list[Block]:
        """Messages that came during the turn, after this tool result (team/steering.py); `_deliver` marks them."""
        try:
            inbox = self.mailbox.unread(self.team, self.name)
        except StoreUnavailable:  # the store said it was away, once: what came meanwhile waits there for a later look
            return []
        self.changes.mid_turn(inbox, self._config)  # a mode change applies at once
        unread = steerable(inbox, self._pending, self._unmarked)
        config = self._config() if unread else None
        envs = wake_order(self._judged(unread, config), config.lead_name) if config is not None else []
        self._pending.extend(envs)
        return teammate_blocks(envs, self._team_event, self.name, self.me.color)

    def _judged(self, unread: list[Envelope], config: TeamConfig) -> list[Envelope]:
        """Each message judged (a forged one is marked); a copy of one already in this batch is left out."""
        seen: set[str] = set()
        out = []
        for env in unread:
            if env.msg_id is not None and env.msg_id in seen:
                continue
            seen.add(env.msg_id or "")
            verdict = self.trust.judge(env, config)
            if self.changes.take(env, verdict, config.lead_name):  # a mode or model change, taken (or refused) now
                continue
            msg = parse_message(env.text)
            if isinstance(msg, ShutdownRequest) and env.sender == config.lead_name and verdict != "forged":
                self._shutdowns.add(msg.request_id)
            out.append(env)
        return out

    def _render(self, env: Envelope, config: TeamConfig) -> str | None:
        """The message as the model reads it; None for a frame with no effect to show."""
        msg = parse_message(env.text)
        if isinstance(msg, PlanApprovalResponse) and env.sender == config.lead_name:
            return take_verdict(env, msg, self.ctx.signals, self.changes, keyed=self.trust.lead_key is not None)
        if isinstance(msg, CompactRequest) and env.sender == config.lead_name and not env.unverified:
            self._compact(msg.instructions or "")
            return None
        return message_block(env)

    def _compact(self, instructions: str) -> None:
        """The lead asked for a compaction: done now, between turns; the teammate stays in its team either way."""
        try:
            self.session.compact(instructions)
            self._set_state(self.presence.state)  # with its context's new size
        except AgentTeamsError as e:
            diagnostics.warning("%s: could not compact its conversation: %s", self.name, e)

    def _turn(self, work: Work) -> bool:
        """One turn; True when the teammate approved its shutdown and must exit."""
        diagnostics.stamp("turn")
        self._notes = TurnNotes()
        self._pending = work.envs
        self._own.in_turn = True
        # the durable state writes (~10 ms with fsync) run once the model request has left (after the first turn)
        self._answering.clear()
        marking = workers.started(f"{self.name}-state", functools.partial(self._mark_working, work))
        reason, failure, final = "available", None, None
        # past its budget it still answers its lead's shutdown request (the lead asks once the budget is spent)
        self._budget.answering_shutdown = any(isinstance(parse_message(e.text), ShutdownRequest) for e in work.envs)
        try:
            result = until_idle_allowed(self.session, self.team, self.name, self.stop, self.session.run(work.prompt))
            final = result.text or None
            if result.stop_reason == "interrupted":
                reason = "interrupted"
            elif result.stop_reason == "max_budget_usd":
                diagnostics.warning("%s: its budget is spent; its turn stopped before running more tools", self.name)
        except AgentTeamsError as e:  # the model is unreachable: tell the lead, keep serving
            reason, failure = "failed", str(e)
            diagnostics.warning("%s: the turn failed: %s", self.name, e)
        finally:
            self._answering.set()
            marking.wait()
            self._own.in_turn = False
            self._deliver()  # even a failed turn consumed them: redelivering would fail the same way
        if self.ctx.signals.exit_requested:
            self._set_state("stopping")
            return True
        self._to_lead.set_active(False)
        self._set_state("awaiting_plan_approval" if self.ctx.signals.awaiting_plan_approval else "idle")
        self._to_lead.idle_notice(self._notes, reason, failure, final)
        return False

    def _mark_working(self, work: Work) -> None:
        # at once on the first turn, with the first isActive write: our public key (team/trust.py)
        if not self.store.keyring.recorded(self.team, self.name):
            if work.envs:  # a claimed task's turn has no unread message keeping its lead from taking the team for idle
                self._answering.wait(MARK_AFTER)  # off the delivery path: once the request has left
            self._to_lead.set_active(True)
        self._set_state("working", current_task=work.task_id or self.presence.current_task)

    def _record_key(self, public: str) -> None:
        """Our public key in our member entry, with the session id a resumed lead relaunches us with."""
        fields = {"is_active": self._own.in_turn, "verify_key": public, "session_id": self.ctx.session_id}
        try:
            self.teams.set_member_fields(self.team, self.name, **fields)
        except NotFoundError as e:  # removed from the team: the loop notices and stops
            diagnostics.debug("%s: could not record its key: %s", self.name, e)
        except AgentTeamsError as e:
            diagnostics.warning("%s: could not record its key (its messages will show as unverified): %s", self.name, e)
        except OSError as e:  # a full or read-only disk
            write_failures.failed("team files", f"of team {self.team}", e)

    def _deliver(self) -> None:
        if self._pending:
            if not mark_read(self.mailbox, self.team, self.name, self._pending):
                self._unmarked.update(e.identity for e in self._pending)  # a full disk: never served twice
            self.trust.delivered(self._pending)
            self._pending = []

    # -- what the agent does ------------------------------------------------------------------------

    def _on_agent_event(self, event: AgentEvent) -> None:
        if event.kind in ("answering", "assistant"):
            self._answering.set()
        if event.kind == "assistant":
            self._deliver()  # the messages reached the model: now they count as delivered
            if event.usage is not None:
                cost = self.session.ledger.account(self.name).cost_usd
                self._own.spent(event.usage, cost, self.session.context_use(), now=self._held)
        elif event.kind == "tool_end" and event.result is not None and not event.result.is_error:
            self._note_tool(event.tool, event.input)
        self._own.saw(event)  # the tool it runs now, for `status`
        self._outer(event)

    def _note_tool(self, tool: str, args: dict[str, Any]) -> None:
        if tool == "SendMessage":
            out = parse_send(args)
            if out.kind == "message" and out.to and out.to != self._to_lead.lead_name():
                first = (out.content or "").strip().splitlines()
                about = out.summary or (first[0] if first else "")
                self._notes.peer_dm = f"[to {out.to}] {about[:80]}"
                self._set_state(self.presence.state, last_message=self._notes.peer_dm)
        elif tool == "TaskUpdate" and args.get("status") == "completed":
            self._notes.completed_task = str(args.get("taskId") or args.get("task_id") or "") or None
            self._set_state(self.presence.state, current_task=None)

    def _set_state(self, state: State, **fields: Any) -> None:
        tokens, window = self.session.context_use()  # how full its conversation is: `status` shows the %
        self._own.write(state=state, context_tokens=tokens, context_window=window, **fields)
        self._team_event(TeamEvent("state", self.name, state, color=self.me.color))
