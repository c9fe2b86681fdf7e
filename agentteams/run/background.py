"""Background sessions (`--bg`, `agents`, `attach`, `logs`, `stop`, `respawn`, `rm`): each of ours is an interactive
session in a detached tmux server of its own (socket `bg-<id>.sock` in our private socket dir), so it outlives the
terminal, can lead a team in its own panes, and is attached with tmux; its record is claude's `jobs/<id>/state.json`."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from agentteams.backends.tmux import TmuxBackend, TmuxError
from agentteams.errors import AgentTeamsError, NotFoundError
from agentteams.pids import pid_alive, proc_start
from agentteams.procs.socket_dir import private_dir
from agentteams.store import jobs
from agentteams.store.jobs import Job
from agentteams.store.paths import Layout
from agentteams.team.spawn.base import own_executable

JOB_VAR = "AGENTTEAMS_BG_JOB"  # set in a background session's environment: the session reports its state to its job
WIDTH, HEIGHT = 200, 50  # the detached terminal's size until someone attaches
STOP_WAIT = 20.0  # seconds a stopped session has to take its team down before its tmux server is killed


class BackgroundError(AgentTeamsError):
    """A background session that cannot be started, found or handled here."""


@dataclass(frozen=True)
class Listed:
    """A job as `agents` shows it: its record and the state it is in now."""

    job: Job
    state: str

    def to_json(self) -> dict[str, object]:
        """Claude Code's `agents --json` row."""
        return {"id": self.job.id, "cwd": self.job.cwd, "kind": "background", "startedAt": self.job.started_ms,
                "sessionId": self.job.session_id, "name": self.job.label, "state": self.state}  # fmt: skip


def socket_for(job_id: str) -> Path:
    return private_dir() / f"bg-{job_id}.sock"


def _tmux(job_id: str) -> TmuxBackend:
    return TmuxBackend(str(socket_for(job_id)))


def start_background(prompt: str | None, name: str | None) -> int:
    """`agentteams --bg [-n NAME] [PROMPT] ...`: the session started with this command line's other options; prints
    its id and how to reach it, as claude does, and returns at once."""
    import sys

    from agentteams.run.trust_question import ensure_trusted

    cwd = Path.cwd()
    ensure_trusted(cwd)  # asked here, in the person's terminal: the detached session could never ask
    args = [a for a in sys.argv[1:] if a not in ("--bg", "--background")]
    if prompt:  # the prompt goes last, alone: respawn drops it (the conversation goes on)
        args.reverse()
        args.remove(prompt)
        args.reverse()
    job = start(Layout.from_env(), prompt or "", args, cwd, name)
    head = f"backgrounded · {job.id}" + (f" · {name}" if name else "") + ("" if prompt else " (idle: type a prompt)")
    lines = [head, *(f"  agentteams {verb:<22}{what}" for verb, what in (
        ("agents", "list sessions"), (f"attach {job.id}", "open in this terminal"),
        (f"logs {job.id}", "show recent output"), (f"stop {job.id}", "stop this session")))]  # fmt: skip
    print("\n".join(lines), flush=True)
    return 0


def start(layout: Layout, prompt: str, args: list[str], cwd: Path, name: str | None = None) -> Job:
    """A new background session running `agentteams [args] prompt` in `cwd`; returns once its tmux server runs it.
    The session id begins with the job's id, as claude's do, so either names it."""
    job_id = secrets.token_hex(4)
    session_id = job_id + str(uuid.uuid4())[8:]
    job = Job(job_id, session_id, str(cwd), prompt, "working", jobs.OURS, jobs.iso_now(), name)
    job.raw = {"detail": "starting", "tempo": "active" if prompt else "idle", "template": "bg",
               "respawnFlags": storable_flags(args), "providerEnv": {"CLAUDE_CONFIG_DIR": str(layout.root)},
               "firstTerminalAt": None}  # fmt: skip
    jobs.write_job(layout, job, state="working" if prompt else "idle")
    try:
        _launch(job, ["--session-id", session_id, *args, *([prompt] if prompt else [])])
    except (TmuxError, OSError) as e:
        jobs.write_job(layout, job, state="failed")
        raise BackgroundError(f"cannot start a background session: {e}") from None
    return job


def storable_flags(args: list[str]) -> list[str]:
    """`args` as the job file keeps them for `respawn`: an inline `--settings` JSON loses its `env` credentials (a key
    never lands in a file; a respawned session takes its key from the environment, as any session of ours can)."""
    from agentteams.settings.keyhelper import SECRET_VARS

    def scrub(value: str) -> str:
        try:
            parsed = json.loads(value)
        except ValueError:
            return value  # a settings file's path
        env = parsed.get("env") if isinstance(parsed, dict) else None
        if not isinstance(env, dict) or not any(k in SECRET_VARS for k in env):
            return value
        return json.dumps({**parsed, "env": {k: v for k, v in env.items() if k not in SECRET_VARS}})

    out: list[str] = []
    for arg in args:
        if out and out[-1] == "--settings":
            out.append(scrub(arg))
        elif arg.startswith("--settings="):
            out.append("--settings=" + scrub(arg.removeprefix("--settings=")))
        else:
            out.append(arg)
    return out


def _launch(job: Job, argv: list[str]) -> None:
    """The session's own tmux server, started from this process: it inherits our environment (an API key included,
    never on a command line) and keeps running when this terminal closes."""
    extra = ["-e", f"{JOB_VAR}={job.id}"]  # tmux sets the pane's own TMUX and TMUX_PANE
    _tmux(job.id).run("new-session", "-d", "-s", job.id, "-x", str(WIDTH), "-y", str(HEIGHT), "-c", job.cwd,
                      *extra, "--", *own_executable(), *argv)  # fmt: skip


def running(layout: Layout, job: Job) -> bool:
    """Whether the session runs now: ours by its tmux server; claude's by its supervisor's worker process."""
    if job.ours:
        return socket_for(job.id).exists() and _tmux(job.id).has_session(job.id)
    return _claude_worker_alive(layout, job)


def _claude_worker_alive(layout: Layout, job: Job) -> bool:
    try:
        roster = json.loads((layout.root / "daemon" / "roster.json").read_text(encoding="utf-8"))
        worker = roster["workers"][job.id]
        pid, started = int(worker["pid"]), str(worker["procStart"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return pid_alive(pid) and str(proc_start(pid)) == started


def state_now(layout: Layout, job: Job) -> str:
    """The recorded state while the session runs; a live state whose session is gone reads `failed`, as claude
    shows a job whose worker has gone."""
    if job.state in jobs.LIVE_STATES and not running(layout, job):
        return "failed"
    return job.state


def listing(layout: Layout, *, include_done: bool = False, under: Path | None = None) -> list[Listed]:
    out = []
    for job in jobs.list_jobs(layout):
        if under is not None and not _inside(Path(job.cwd), under):
            continue
        state = state_now(layout, job)
        if include_done or state in jobs.LIVE_STATES:
            out.append(Listed(job, state))
    return out


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def find(layout: Layout, key: str) -> Job:
    """A job by its id, its session id, or part of its name (one match); one clear line when none or several."""
    if not key.strip():  # every name holds "": it must not pick the only session there is
        raise BackgroundError("name a background session: its id, or part of its name")
    every = jobs.list_jobs(layout)
    exact = [j for j in every if key in (j.id, j.session_id)]
    found = exact or [j for j in every if key.lower() in j.label.lower()]
    if not found:
        raise NotFoundError(f"no background session {key!r} (`agentteams agents --all` lists them)")
    if len(found) > 1:
        raise BackgroundError(f"{key!r} names {len(found)} background sessions: {', '.join(j.id for j in found)}")
    return found[0]


def claude_only(job: Job, verb: str) -> BackgroundError:
    return BackgroundError(f"{job.id} is a Claude Code background session: `claude {verb} {job.id}` handles it")


def attach_argv(layout: Layout, job: Job) -> list[str]:
    """The tmux client command that opens the session in this terminal (the caller execs it)."""
    if not job.ours:
        raise claude_only(job, "attach")
    if not running(layout, job):
        state = state_now(layout, job)
        raise BackgroundError(f"{job.id} is not running ({state}): `agentteams respawn {job.id}` restarts it")
    return _tmux(job.id).client_argv("attach-session", "-t", f"={job.id}")


def logs(layout: Layout, job: Job, lines: int = 2000) -> str:
    """The session's recent terminal output, as text."""
    if not job.ours:
        raise claude_only(job, "logs")
    if not running(layout, job):
        state = state_now(layout, job)
        raise BackgroundError(f"{job.id} is not running ({state}); its conversation: agentteams -r {job.session_id}")
    return "\n".join(_tmux(job.id).run("capture-pane", "-p", "-J", "-S", f"-{lines}", "-t", f"={job.id}:"))


def stop(layout: Layout, job: Job) -> None:
    """End the session and everything in its tmux server (its teammates' panes too); its conversation is kept."""
    if not job.ours:
        raise claude_only(job, "stop")
    jobs.update_job(layout, job.id, lambda _now: {"state": "stopped"})  # first: the session's last word leaves it
    if running(layout, job):
        _end(job)
    _remove_socket(job.id)


def _end(job: Job) -> None:
    """SIGTERM to the session (it takes its team down, as Ctrl-D would); its tmux server killed at the deadline."""
    tmux = _tmux(job.id)
    with contextlib.suppress(TmuxError, ValueError, IndexError, ProcessLookupError):
        pid = int(tmux.run("display-message", "-p", "-t", f"={job.id}:", "#{pane_pid}")[0])
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_WAIT
        while time.monotonic() < deadline and pid_alive(pid):
            time.sleep(0.05)
    with contextlib.suppress(TmuxError):  # what is left (a straggler, or a session that ignored the signal)
        tmux.run("kill-server")


def respawn(layout: Layout, job: Job) -> Job:
    """The session again, with its conversation (`--resume`), under the same id."""
    if not job.ours:
        raise claude_only(job, "respawn")
    if running(layout, job):
        stop(layout, job)
    args = [f for f in job.raw.get("respawnFlags", []) if isinstance(f, str)]
    try:
        _launch(job, ["--resume", job.session_id, *args])
    except (TmuxError, OSError) as e:
        jobs.update_job(layout, job.id, lambda _now: {"state": "failed"})
        raise BackgroundError(f"cannot restart {job.id}: {e}") from None
    return jobs.update_job(layout, job.id, lambda _now: {"state": "idle"}) or job  # the record as it is now, not `job`


def remove(layout: Layout, job: Job) -> None:
    """Take a session that has ended off the list (its conversation stays: `agentteams -r` lists it)."""
    if running(layout, job):
        raise BackgroundError(f"{job.id} is running: `agentteams stop {job.id}` first")
    jobs.remove_job(layout, job.id)
    _remove_socket(job.id)


def _remove_socket(job_id: str) -> None:
    path = socket_for(job_id)
    if path.is_socket():
        os.unlink(path)


class JobReporter:
    """Inside a background session (JOB_VAR set): its job record follows its turns (working, idle), and its end."""

    def __init__(self, layout: Layout, job_id: str) -> None:
        self.layout, self.job_id = layout, job_id
        self._state: str | None = None

    @classmethod
    def from_env(cls) -> JobReporter | None:
        job_id = os.environ.get(JOB_VAR, "")
        return cls(Layout.from_env(), job_id) if job_id else None

    def set(self, state: jobs.JobState) -> None:
        if state == self._state:
            return
        self._state = state

        def change(job: Job) -> dict[str, object] | None:
            if job.state not in jobs.LIVE_STATES:  # `stop` wrote "stopped" first: it stays
                return None
            return {"state": state, "raw": {**job.raw, "tempo": _TEMPO[state]}}

        with contextlib.suppress(AgentTeamsError, OSError):  # a record we cannot write never stops the session
            jobs.update_job(self.layout, self.job_id, change)

    def ended(self) -> None:
        self.set("completed")


_TEMPO = {"working": "active", "idle": "idle", "stopped": "idle", "failed": "idle", "completed": "idle"}
