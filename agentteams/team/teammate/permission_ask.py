"""A teammate's tool call that needs approval: asked of its lead (`permission_request`), then its answer waited for in
the teammate's inbox; denied on timeout, on a stop or an interrupt, or when the answer is not verifiably the lead's."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

from agentteams import diagnostics
from agentteams.agent.loop import Answer, PermissionAsk
from agentteams.store.api import Store
from agentteams.store.protocol import PermissionRequest, PermissionResponse, parse_message
from agentteams.store.records import TeamConfig
from agentteams.team.trust import Trust


class LeadPermission:
    """The teammate agent's `ask`: one question at a time, waited for on the inbox's watcher."""

    def __init__(
        self, store: Store, team: str, name: str, trust: Trust, *, send: Callable[[str], None],
        asking: Callable[[bool], None], config: Callable[[], TeamConfig | None], stop: threading.Event,
        interrupt: threading.Event, timeout: float, every: float,
    ) -> None:  # fmt: skip
        self.store, self.team, self.name, self.trust = store, team, name, trust
        self._send = send  # to the lead
        self._asking = asking  # in its presence record: a resumed lead restarts it now, with a key it can verify
        self._config = config  # for judging the answer's signature
        self.stop, self.interrupt = stop, interrupt
        self.timeout = timeout  # seconds a permission request waits for the lead
        self.every = every  # seconds between looks at the stop and interrupt flags; new mail wakes it at once

    def __call__(self, ask: PermissionAsk) -> Answer:
        """Ask the lead by message and wait for its answer (deny on timeout)."""
        request_id = f"perm-{uuid.uuid4().hex[:12]}"
        msg = PermissionRequest(request_id=request_id, agent_id=f"{self.name}@{self.team}", tool_name=ask.tool,
                                description=ask.reason, input=ask.input, permission_suggestions=[])  # fmt: skip
        self._send(msg.to_text())
        self._asking(True)
        try:
            return self._answer_to(request_id, ask.tool)
        finally:
            self._asking(False)

    def _answer_to(self, request_id: str, tool: str) -> Answer:
        deadline = time.monotonic() + self.timeout  # wall clock: other messages do not extend it
        mail = self.store.mail
        with self.store.watch(self.team, self.name) as watcher:
            while not self.stop.is_set() and not self.interrupt.is_set():
                for env in mail.unread(self.team, self.name):
                    answer = parse_message(env.text)
                    if isinstance(answer, PermissionResponse) and answer.request_id == request_id:
                        mail.mark_delivered(self.team, self.name, [env])
                        if self.trust.judge(env, self._config()) == "forged":
                            diagnostics.warning("%s: an unverified answer to %s; denied", self.name, tool)
                            return "deny"
                        self.trust.delivered([env])
                        return "allow" if answer.subtype == "success" else "deny"
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                watcher.wait(min(self.every, left))
        return "deny"
