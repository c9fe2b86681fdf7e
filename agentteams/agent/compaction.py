"""Compaction: one agent's conversation replaced by a summary the model writes of it (`/compact`, or on its own
when the context nears the model's window), with PreCompact / SessionStart hooks and the transcript's entries."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentteams import diagnostics
from agentteams.agent.hooks.points import HookPoints
from agentteams.agent.loop import Agent, AgentEvent
from agentteams.errors import AgentTeamsError
from agentteams.model.aliases import long_context
from agentteams.model.types import Block, Message, Usage
from agentteams.store.transcripts.writer import CompactTrigger, Transcript

NOTHING_TO_COMPACT = "Not enough messages to compact."  # Claude Code's refusal, word for word
DEFAULT_WINDOW = 200_000
LONG_WINDOW = 1_000_000  # a `[1m]` model id, or a model with that window of its own
SUMMARY_RESERVE = 20_000  # tokens kept free for the summary's own answer (at most the request's max_tokens)
HEADROOM = 13_000  # Claude Code's margin below the usable window: auto compaction starts there by default
INSTRUCTION_MARK = "[agentteams: summarise the conversation]"  # also how a scripted server tells the request apart
INSTRUCTION = (
    f"{INSTRUCTION_MARK}\nStop the work for a moment and write a summary of this whole conversation, in plain "
    "text, without calling any tool. The summary replaces the conversation: whoever reads it next has nothing "
    "else. Keep what is needed to carry on: what the user asked for and every request or correction they made "
    "along the way; decisions taken and why; files read or changed, with their paths and what matters in them; "
    "commands run and what they showed; errors met and how they were resolved; what is done, what is under "
    "way, and the next step."
)
SUMMARY_LEAD = (
    "This session goes on from an earlier conversation that grew too long and was replaced by the summary "
    "below, written at that point. Everything the earlier messages held that still matters is in it."
)
GO_ON = "The summary was made in the middle of a task: carry on with it from where it stopped."


class CompactError(AgentTeamsError):
    """A compaction that did not happen (nothing to compact, a hook said no, no summary came back): one line."""


@dataclass(frozen=True)
class CompactPolicy:
    """When compaction may happen: the model's window and the context size that starts an automatic one."""

    window: int
    threshold: int
    auto: bool = True  # DISABLE_AUTO_COMPACT / autoCompactEnabled false: only /compact
    manual: bool = True  # DISABLE_COMPACT: not even /compact


def context_window(model: str, env: Mapping[str, str]) -> int:
    """The model's window: 1M for a `[1m]` id or a model with a 1M window of its own, else 200k;
    CLAUDE_CODE_AUTO_COMPACT_WINDOW may make it smaller."""
    window = LONG_WINDOW if long_context(model) else DEFAULT_WINDOW
    override = _number(env.get("CLAUDE_CODE_AUTO_COMPACT_WINDOW"))
    return min(window, int(override)) if override and override > 0 else window


def policy_for(model: str, max_tokens: int, *, env: Mapping[str, str] | None = None,
               auto_setting: object = None) -> CompactPolicy:  # fmt: skip
    """Claude Code's rule: auto compaction at the usable window (the window less the summary's reserve) less a
    margin; CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (1-100, a percentage of the usable window) can only make it earlier."""
    environ = os.environ if env is None else env
    window = context_window(model, environ)
    usable = window - min(max_tokens, SUMMARY_RESERVE)
    threshold = usable - HEADROOM
    pct = _number(environ.get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"))
    if pct is not None and 0 < pct <= 100:
        threshold = min(int(usable * pct / 100), threshold)
    manual = not _truthy(environ.get("DISABLE_COMPACT"))
    auto = manual and auto_setting is not False and not _truthy(environ.get("DISABLE_AUTO_COMPACT"))
    return CompactPolicy(window=window, threshold=max(1, threshold), auto=auto, manual=manual)


def estimate_tokens(messages: list[Message]) -> int:
    """A cheap size of messages not yet measured by the API: a token per four characters of their JSON."""
    return (len(json.dumps(messages, ensure_ascii=False)) + 3) // 4 if messages else 0


def measured(entries: list[dict[str, Any]], messages: list[Message]) -> tuple[int, int]:
    """A resumed conversation's size as its newest answer measured it (the usage on its transcript entry), and
    how many messages that covers; (0, 0) when nothing was answered (it is then estimated whole)."""
    answers = [e for e in entries if e.get("type") == "assistant" and isinstance(e.get("message"), dict)]
    usage = answers[-1]["message"].get("usage") if answers else None
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    if not isinstance(usage, dict) or last < 0:
        return 0, 0
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
    return sum(v for k in keys if isinstance(v := usage.get(k), int)), last + 1


@dataclass(frozen=True)
class Compacted:
    """One compaction done: why, the context before (measured) and after (estimated), the summary."""

    trigger: CompactTrigger
    pre_tokens: int
    post_tokens: int
    summary: str


class Compactor:
    """Compacts one agent's conversation; `auto` is the agent's check before each model call."""

    def __init__(self, agent: Agent, transcript: Callable[[], Transcript], hooks: HookPoints,
                 policy: Callable[[], CompactPolicy]) -> None:  # fmt: skip
        self.agent = agent
        self._transcript = transcript  # looked up each time: /clear and /resume swap it
        self.hooks = hooks
        self.policy = policy

    def context_tokens(self) -> int:
        """The context the next request carries: what the last answer's usage measured, plus an estimate of
        the messages added since."""
        agent = self.agent
        return agent.context_tokens + estimate_tokens(agent.messages[agent.context_measured_at :])

    def auto(self) -> None:
        """Before a model call: compact first when the context has passed the threshold. A failure is a
        warning: the request goes out as it is (the API says so if it is really too long)."""
        policy = self.policy()
        if not policy.auto or self.context_tokens() < policy.threshold:
            return
        try:
            self.compact(trigger="auto")
        except AgentTeamsError as e:  # the summary request failed too: the model's error says why
            diagnostics.warning("automatic compaction skipped: %s", e)

    def compact(self, instructions: str = "", trigger: CompactTrigger = "manual") -> Compacted:
        """Summarise the conversation and go on from the summary; CompactError when it cannot."""
        if not self.policy().manual:
            raise CompactError("compaction is turned off (DISABLE_COMPACT)")
        messages = self.agent.messages
        pending = _pending_prompt(messages)
        upto = len(messages) - (1 if pending is not None else 0)
        if not any(m.get("role") == "assistant" for m in messages[:upto]):
            raise CompactError(NOTHING_TO_COMPACT)
        blocked, extra = self.hooks.pre_compact(trigger, instructions)
        if blocked is not None:
            raise CompactError(f"Compaction blocked by PreCompact hook: {blocked}")  # the real CLI's words
        pre, started = self.context_tokens(), time.monotonic()
        summary, usage = self._summary(upto, "\n\n".join(t for t in (instructions, *extra) if t.strip()))
        mid_turn = pending is None and upto > 0 and _has_tool_results(messages[upto - 1])
        post = self._go_on_from(summary, pending, trigger, (pre, int((time.monotonic() - started) * 1000)), mid_turn)
        # with the summary request's usage: what it cost is counted as any answer's
        counts = {"pre_tokens": pre, "post_tokens": post}
        self.agent.emit(AgentEvent("compacted", text=trigger, input=counts, usage=usage))
        diagnostics.debug("compacted (%s) in %.1fs: %d -> ~%d tokens", trigger, time.monotonic() - started, pre, post)
        return Compacted(trigger, pre, post, summary)

    def _go_on_from(self, summary: str, pending: Message | None, trigger: CompactTrigger, took: tuple[int, int],
                    mid_turn: bool) -> int:  # fmt: skip
        """The conversation becomes the summary (then the pending prompt), in memory and in the transcript; the
        estimated size of what is left. `took`: the tokens before it and the milliseconds the summary took."""
        content: list[Block] = [{"type": "text", "text": f"{SUMMARY_LEAD}\n\n{summary}"}]
        if mid_turn:  # the turn goes on after the summary
            content.append({"type": "text", "text": GO_ON})
        content += [{"type": "text", "text": c} for c in self.hooks.session_start("compact", self.agent.settings.model)]
        kept: list[Message] = [{"role": "user", "content": content}, *([pending] if pending is not None else [])]
        post = estimate_tokens(kept)
        name, transcript = self.agent.settings.name, self._transcript()
        transcript.compacted(name, "\n\n".join(b["text"] for b in content), trigger=trigger, pre_tokens=took[0],
                             post_tokens=post, duration_ms=took[1])  # fmt: skip
        if pending is not None:  # written again after the boundary: a resumed session has it after the summary
            transcript.prompt(name, pending.get("content") or "")
        self.agent.messages = kept
        self.agent.context_tokens, self.agent.context_measured_at = 0, 0
        return post

    def _summary(self, upto: int, instructions: str) -> tuple[str, Usage]:
        """One request as the normal ones (model, system, tools, the conversation so far: its cached prefix is
        read back), with the summarise instruction as the newest user message."""
        request = self.agent.request()
        text = INSTRUCTION + (f"\n\nThe user adds these instructions for the summary:\n{instructions}"
                              if instructions else "")  # fmt: skip
        ask: Message = {"role": "user", "content": [{"type": "text", "text": text}]}
        request.messages = [*request.messages[:upto], ask]
        response = self.agent.client.complete(request)
        self.agent.usage.add(response.usage)
        summary = _summary_text("".join(b.get("text", "") for b in response.content if b.get("type") == "text"))
        if not summary:
            raise CompactError("the model answered the summary request without a summary")
        return summary, response.usage


def _summary_text(answer: str) -> str:
    """The summary in an answer: inside `<summary>` tags when the model used them (Claude Code's own prompt asks
    for them, after an `<analysis>` draft, and a script written for it answers so), else the whole answer."""
    found = re.search(r"<summary>(.*?)</summary>", answer, re.DOTALL)
    return (found.group(1) if found else answer).strip()


def _pending_prompt(messages: list[Message]) -> Message | None:
    """The newest message when it is a prompt not answered yet (kept after the summary, as Claude Code keeps the
    prompt that set off an automatic compaction); tool results are not: they belong to the call before them."""
    if not messages or messages[-1].get("role") != "user" or _has_tool_results(messages[-1]):
        return None
    return messages[-1]


def _has_tool_results(message: Message) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None and text.strip() else None
    except ValueError:
        return None


def _truthy(text: str | None) -> bool:
    return (text or "").strip().lower() in ("1", "true", "yes", "on")
