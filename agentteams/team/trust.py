"""Who really wrote an inbox message: signatures, the replay window and single-use ids, judged for a teammate
(Claude Code 2.1.330's rule for the lead's voice, ours for every member's) and for a lead's own inbox."""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Literal

from agentteams.errors import AgentTeamsError
from agentteams.store.api import Mail
from agentteams.store.fs.atomic_json import epoch_ms, now_iso
from agentteams.store.paths import LEAD_NAME
from agentteams.store.protocol import ShutdownRequest, parse_message
from agentteams.store.records import Envelope, TeamConfig
from agentteams.store.signing import (
    LEAD_DOMAIN,
    LEAD_SIG,
    MEMBER_DOMAIN,
    MEMBER_SIG,
    PROTECTED_SENDERS,
    LeadVerifyKey,
    VerifyKey,
    verifies,
)

# verified: signed by who it claims; forged: claims a voice it cannot prove (shown marked, no protocol effect);
# unverifiable: a sender with no key to check against (a real `claude` peer), taken as it comes
Verdict = Literal["verified", "forged", "unverifiable"]
REPLAY_SLACK_MS = 120_000  # how far before a process's start a signed message may date (Claude Code's window)


def _parse_ms(timestamp: str) -> int | None:
    try:
        return int(datetime.fromisoformat(timestamp).timestamp() * 1000)
    except (ValueError, TypeError, OverflowError):
        return None


def claims_lead(sender: str) -> bool:
    """`team-lead`, `user` or `system` in any spelling: names only a lead may write as."""
    return sender.strip().lower() in PROTECTED_SENDERS


class Trust:
    """One agent's judge of its inbox. Each msg_id verifies once: a message copied back after delivery is forged."""

    def __init__(self, *, role: Literal["lead", "teammate"], lead_key: LeadVerifyKey | None = None) -> None:
        self.role = role
        self.lead_key = lead_key
        self.started_ms = epoch_ms()
        self._delivered: set[str] = set()
        self._verdicts: dict[tuple[str, str, str], Verdict] = {}  # (msg_id, signatures) -> verdict, until delivered
        self._keys: dict[str, VerifyKey | None] = {}

    def judge(self, env: Envelope, config: TeamConfig | None) -> Verdict:
        """The verdict on `env` (also set as `env.unverified`); the same message is judged the same each time."""
        key = (env.msg_id, str(env.extra.get(LEAD_SIG)), str(env.extra.get(MEMBER_SIG))) if env.msg_id else None
        if env.msg_id is not None and env.msg_id in self._delivered:
            verdict: Verdict = "forged"  # a replay of a message already delivered
        elif key is not None and key in self._verdicts:
            verdict = self._verdicts[key]  # seen again before delivery (a rescan): no second check
        else:
            verdict = self._first_judgement(env, config)
            if key is not None:
                self._verdicts[key] = verdict
        env.unverified = verdict == "forged"
        return verdict

    def delivered(self, envs: list[Envelope]) -> None:
        """These reached the model: their ids never verify again (and their verdicts need not be kept)."""
        ids = {e.msg_id for e in envs if e.msg_id is not None}
        self._delivered.update(ids)
        for key in [k for k in self._verdicts if k[0] in ids]:
            del self._verdicts[key]

    def _first_judgement(self, env: Envelope, config: TeamConfig | None) -> Verdict:
        if claims_lead(env.sender):
            if self.role == "lead":
                return "forged"  # nobody writes to the lead as the lead (or the user, or the system)
            if self.lead_key is None:
                return "unverifiable"  # started without a key (an older lead): the lead's word is taken as before
            ok = env.sender in PROTECTED_SENDERS and self._fresh(env, self.lead_key.issued_ms)
            return "verified" if ok and verifies(LEAD_DOMAIN, env, self.lead_key.key) else "forged"
        member = config.member(env.sender) if config is not None else None
        key = self._key(member.verify_key) if member is not None and member.verify_key else None
        if key is not None:
            ok = self._fresh(env, self.started_ms) and verifies(MEMBER_DOMAIN, env, key)
            return "verified" if ok else "forged"
        if self.role == "lead" and member is not None and member.tmux_pane_id in ("in-process", "leader"):
            return "forged"  # Claude Code's in-process members never write files; ours always sign
        if self.lead_key is not None and isinstance(parse_message(env.text), ShutdownRequest):
            return "forged"  # only the lead may ask us to stop, and its requests are signed
        return "unverifiable"

    def _fresh(self, env: Envelope, issued_ms: int) -> bool:
        """Within the replay window and not used before: Claude Code's floor is the process start less two
        minutes while the key is new at start, else the process start itself."""
        if not env.msg_id or env.msg_id in self._delivered:
            return False
        sent = _parse_ms(env.timestamp)
        near = self.started_ms <= issued_ms + REPLAY_SLACK_MS
        floor = self.started_ms - REPLAY_SLACK_MS if near else self.started_ms
        return sent is not None and sent >= floor

    def _key(self, public: str) -> VerifyKey | None:
        if public not in self._keys:
            self._keys[public] = VerifyKey.parse(public)
        return self._keys[public]


class LeadPromises:
    """What a lead has asked of its teammates, so that only real answers count: the shutdown requests it sent
    (an approval is honoured once, from that teammate) and the plans it was sent (their digests)."""

    def __init__(self) -> None:
        self._shutdowns: dict[str, set[str]] = {}  # teammate -> ids of requests not yet answered
        self._plans: dict[str, str] = {}  # plan request id -> SHA-256 of its plan

    def shutdown_sent(self, teammate: str, request_id: str) -> None:
        self._shutdowns.setdefault(teammate, set()).add(request_id)

    def ask_shutdown(self, mail: Mail, team: str, teammate: str, reason: str) -> None:
        """Send `teammate` a shutdown request (the lead's voice), its approval then expected; a gone inbox is
        no error (the caller stops it anyway when it does not leave)."""
        request = ShutdownRequest(
            request_id=ShutdownRequest.new_request_id(teammate), sender=LEAD_NAME, reason=reason, timestamp=now_iso()
        )
        self.shutdown_sent(teammate, request.request_id)
        with contextlib.suppress(AgentTeamsError):
            mail.send(team, teammate, request.to_text(), sender=LEAD_NAME)

    def take_approval(self, teammate: str, request_id: str) -> bool:
        """True once for an approval of a request this lead sent to `teammate`."""
        pending = self._shutdowns.get(teammate, set())
        if request_id not in pending:
            return False
        pending.discard(request_id)
        return True

    def answered(self, teammate: str, request_id: str) -> None:
        """A refusal: the request is settled without the teammate leaving."""
        self._shutdowns.get(teammate, set()).discard(request_id)

    def forget(self, teammate: str) -> None:
        self._shutdowns.pop(teammate, None)

    def awaiting(self, teammates: list[str]) -> bool:
        """Whether any of these has a shutdown request it has not answered yet."""
        return any(self._shutdowns.get(t) for t in teammates)

    def plan_seen(self, request_id: str, digest: str) -> None:
        self._plans[request_id] = digest

    def plan_digest(self, request_id: str) -> str | None:
        return self._plans.get(request_id)
