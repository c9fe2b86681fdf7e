"""How a lead answers a teammate's permission request: by its judge (the person) or its own policy, written
back as Claude Code's `permission_response`, off the lead's team thread; what the person said "don't ask again" to,
per teammate."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Literal

from agentteams import diagnostics
from agentteams.agent.permissions.policy import PermissionPolicy
from agentteams.agent.session import Session
from agentteams.errors import AgentTeamsError
from agentteams.store.paths import LEAD_NAME
from agentteams.store.protocol import PermissionRequest, PermissionResponse
from agentteams.team.lead.ask_scope import Withdrawable, asking

Verdict = Literal["allow", "deny", "always"]
# (request, member name) -> the verdict (or True/False). Interactive: the person; headless: the lead's policy
PermissionJudge = Callable[[PermissionRequest, str], Verdict | bool]


class Remembered:
    """The calls the person allowed a teammate for the rest of the session (a command prefix, a path): the same
    teammate is not asked again for them. Kept by its lead, for our teammates and a real claude alike."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_member: dict[str, PermissionPolicy] = {}

    def covers(self, session: Session, msg: PermissionRequest, member: str) -> bool:
        tool, target = _target(session, msg)
        with self._lock:
            policy = self._by_member.get(member)
            # the whole decision, not the rule's words alone: `touch x > ~/.bashrc` is no `touch` a person allowed
            return bool(policy and tool and policy.decide(tool, _kind(session, tool), target).behavior == "allow")

    def add(self, session: Session, msg: PermissionRequest, member: str) -> list[dict[str, Any]]:
        """Remember the call for `member`; the rules as Claude Code's `permission_updates` name them."""
        tool, target = _target(session, msg)
        if tool is None:
            return []
        with self._lock:
            policy = self._by_member.setdefault(member, PermissionPolicy(cwd=session.options.cwd, interactive=False))
            before = len(policy.session_rules)
            policy.remember(tool, target, _kind(session, tool))
            added = policy.session_rules[before:]
        rules = [{"toolName": r.tool, **({"ruleContent": r.pattern} if r.pattern else {})} for r in added]
        return [{"type": "addRules", "rules": rules, "behavior": "allow", "destination": "session"}] if rules else []


def _target(session: Session, msg: PermissionRequest) -> tuple[str | None, str | None]:
    tool = session.tool(msg.tool_name)
    if tool is None:
        return None, None
    try:
        return tool.name, tool.permission_target(msg.input, session.options.cwd)
    except AgentTeamsError:
        return tool.name, None


def _kind(session: Session, tool_name: str) -> str:
    tool = session.tool(tool_name)
    return tool.kind if tool is not None else "other"


def decide(session: Session, judge: PermissionJudge | None, msg: PermissionRequest, who: str) -> Verdict:
    """The verdict: the judge's when there is one, else what the lead's own rules say of the same call."""
    if judge is not None:
        verdict = judge(msg, who)
        return ("allow" if verdict else "deny") if isinstance(verdict, bool) else verdict
    tool, target = _target(session, msg)
    if tool is None:
        return "deny"
    return "allow" if session.policy.decide(tool, _kind(session, tool), target).behavior == "allow" else "deny"


def response(msg: PermissionRequest, allow: bool, updates: list[dict[str, Any]] | None = None) -> PermissionResponse:
    return PermissionResponse(
        request_id=msg.request_id, subtype="success" if allow else "error",
        response={"updated_input": msg.input, "permission_updates": updates or []} if allow else None,
        error=None if allow else "The team lead denied this request.",
    )  # fmt: skip


def answer(
    session: Session, judge: PermissionJudge | None, team: str, msg: PermissionRequest, who: str,
    remembered: Remembered | None = None, *, unless: Withdrawable | None = None,
) -> bool | None:  # fmt: skip
    """Decide (what was allowed for the session is not asked again) and write the answer to `who`'s inbox; None, and
    nothing written, when the request was withdrawn (`unless`) meanwhile."""
    if remembered is not None and remembered.covers(session, msg, who):
        verdict: Verdict = "allow"
    else:
        verdict = decide(session, judge, msg, who)
    if unless is not None and unless.withdrawn:
        return None
    updates = remembered.add(session, msg, who) if verdict == "always" and remembered is not None else []
    allow = verdict in ("allow", "always")
    session.store.mail.send(team, who, response(msg, allow, updates).to_text(), sender=LEAD_NAME)
    return allow


class TeammateAsks:
    """Teammates' permission requests being decided off the lead's team thread: a person may take minutes to answer,
    and meanwhile the lead must beat, read its inbox and see a teammate die. A request from a teammate that is gone
    is withdrawn: its question leaves the prompt and no answer is sent."""

    def __init__(
        self, session: Session, judge: PermissionJudge | None, remembered: Remembered,
        answered: Callable[[str, PermissionRequest, bool], None],
    ) -> None:  # fmt: skip
        self.session, self.judge, self.remembered, self.answered = session, judge, remembered, answered
        self._lock = threading.Lock()
        self._open: dict[str, list[tuple[PermissionRequest, Withdrawable]]] = {}

    def start(self, team: str, msg: PermissionRequest, who: str) -> None:
        """Answer `who`'s request: at once by rules (or what the person allowed for the session), else on a thread
        of its own while the judge (the person, an SDK program) decides."""
        if self.judge is None or self.remembered.covers(self.session, msg, who):
            self._answer(team, msg, who, Withdrawable())
            return
        scope = Withdrawable()
        with self._lock:
            self._open.setdefault(who, []).append((msg, scope))
        run = (team, msg, who, scope)
        threading.Thread(target=self._answer, args=run, name=f"lead-asks-{who}", daemon=True).start()

    def _answer(self, team: str, msg: PermissionRequest, who: str, scope: Withdrawable) -> None:
        try:
            with asking(scope):
                allow = answer(self.session, self.judge, team, msg, who, self.remembered, unless=scope)
        except AgentTeamsError as e:  # its inbox is gone with its team: nobody waits for the answer
            diagnostics.debug("no answer to %s's permission request: %s", who, e)
            return
        finally:
            with self._lock:
                mine = [a for a in self._open.get(who, []) if a[1] is not scope]
                self._open[who] = mine
                if not mine:
                    self._open.pop(who, None)
        if allow is not None:
            self.answered(who, msg, allow)

    def withdraw(self, who: str) -> list[PermissionRequest]:
        """`who` is gone: its requests still waiting for a verdict are withdrawn; the ones that were."""
        with self._lock:
            pending = self._open.pop(who, [])
        for _msg, scope in pending:
            scope.withdraw()
        return [msg for msg, _scope in pending]
