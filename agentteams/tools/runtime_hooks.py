"""Typed hooks between a runtime and its tools: what the runtime offers them (`RuntimeHooks`) and what a
turn's tools tell the runtime back (`TurnSignals`). Tools sit below the runtimes, so they reach up only here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

if TYPE_CHECKING:  # the REPL reads the permission modes here before its prompt: the model's types load later
    from agentteams.model.types import ModelRequest, ModelResponse

PermissionMode = Literal["default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "delegate"]
PERMISSION_MODES: tuple[str, ...] = get_args(PermissionMode)
# Claude Code's modes taken as ours: "auto" approves routine work with a classifier (ours has none, so edits pass
# and anything riskier asks); "bubble" (2.1.330) sends a teammate's questions up to its lead, as ours always do;
# "manual" is 2.1.330's newer name for the mode that asks
MODE_ALIASES = {"auto": "acceptEdits", "bubble": "default", "manual": "default"}

# (subagent type, prompt, model or None) -> the subagent's final text, and the call's structured result
SubagentRunner = Callable[[str, str, str | None], tuple[str, dict[str, Any]]]
# (subagent type, prompt, model or None) -> the started background subagent's id and the file its report goes to
BackgroundStarter = Callable[[str, str, str | None], tuple[str, str]]
# the Task tool's arguments -> what the model is told about the new teammate
TeammateSpawner = Callable[[dict[str, Any]], str]
# (teammate, "mode" | "model", value) -> what the lead's model is told; ToolInputError when it cannot be done
TeammateSetter = Callable[[str, Literal["mode", "model"], str], str]
# a finished plan -> approved? (the person, or headless the configured rule); approval leaves plan mode
PlanApprover = Callable[[str], bool]


@dataclass(frozen=True)
class TaskHookInfo:
    """A task being created or completed, as the TaskCreated / TaskCompleted hooks are told of it."""

    task_id: str
    subject: str
    description: str
    agent_name: str  # the agent creating or completing it
    team_name: str | None


# the task -> feedback refusing it (a hook exited 2 or blocked), or None to go ahead
TaskHook = Callable[[TaskHookInfo], str | None]


def _default_mode() -> PermissionMode:
    return "default"


class PeerHooks(Protocol):
    """A session's messages to independent sessions on this machine (agent/peers.py): ListAgents and SendMessage."""

    def listing(self, teammates: list[str]) -> str: ...

    def knows(self, to: str) -> bool: ...

    def send(self, to: str, body: str, summary: str | None, notify: bool) -> tuple[dict[str, Any], bool]: ...


@dataclass
class RuntimeHooks:
    """What the runtime lends its tools. `permission_mode` is read live from the policy: never a copy."""

    model: str = ""
    permission_mode: Callable[[], PermissionMode] = _default_mode
    run_subagent: SubagentRunner | None = None
    # a session's main agent whose runtime delivers a background subagent's report when it ends (agent/background)
    start_subagent: BackgroundStarter | None = None
    ask_model: Callable[[ModelRequest], ModelResponse] | None = None  # one side request, its usage counted
    spawn_teammate: TeammateSpawner | None = None
    set_teammate: TeammateSetter | None = None  # a lead's: change a live teammate's mode or model
    approve_plan: PlanApprover | None = None
    # a teammate's: was a shutdown request with this id really sent by its lead? (approving any other is refused)
    shutdown_requested: Callable[[str], bool] | None = None
    # a lead's: it sent this teammate a shutdown request with this id (only an approval of it is honoured)
    shutdown_sent: Callable[[str, str], None] | None = None
    # a lead's: the SHA-256 of the plan a teammate submitted under this request id, if it has seen one
    plan_digest: Callable[[str], str | None] | None = None
    task_created: TaskHook | None = None  # TaskCreated hooks: a refusal deletes the new task
    task_completed: TaskHook | None = None  # TaskCompleted hooks: a refusal leaves the task as it was
    # a file tool is about to change this file: the session's checkpoints keep what it holds first (agent/checkpoints)
    file_changing: Callable[[Path], None] | None = None
    # a lead's: the processes of teammates that left, waited for (bounded) before TeamDelete removes what they write
    await_departures: Callable[[], None] | None = None
    peers: PeerHooks | None = None  # a session's (not a teammate's): other sessions on this machine
    # set while `peers` is still being started (off a run's start path): waits for that start, starting it now
    peers_pending: Callable[[], None] | None = None


@dataclass
class TurnSignals:
    """What this turn's tools asked of the runtime; the runtime reads and clears them between turns."""

    exit_requested: bool = False  # an approved shutdown: end the agent once the turn is over
    awaiting_plan_approval: str | None = None  # the request id of a plan sent to the lead
    plan_digest: str | None = None  # the SHA-256 of that plan: a signed approval must name the same plan
