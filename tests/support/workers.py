"""Child-process workers for the concurrency and fault tests (`python -m tests.support.workers <cmd> ...`), and
`Pool` and `Gate`, which start, release, collect and kill them (tests get those as the `pool` and `gate` fixtures)."""

# A child runs with cwd = the project root. Given `--ready` and `--go`, it touches its ready file once warm and
# waits for the shared go file before working. It reports on stdout one flushed line per completed step, so a
# parent can trust every complete line even after a SIGKILL.

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from tests.support.wait import wait_until

ROOT = Path(__file__).resolve().parents[2]
START_DEADLINE = 60.0  # how long a child waits for the go file before giving up
POLL = 0.005


# -- child side --------------------------------------------------------------------------------------


_PARENT = os.getppid()


def _emit(line: str) -> None:
    print(line, flush=True)


def _orphaned() -> bool:
    """True once the test process that started us is gone: endless loops stop rather than run forever."""
    return os.getppid() != _PARENT


def _ready_then_go(ready: str | None, go: str | None) -> None:
    from agentteams.store.fs import locking

    locking._portalocker()  # warm the lazy import so the first lock is as fast as the rest
    if ready:
        Path(ready).touch()
    if go:
        wait_until(lambda: os.path.exists(go), START_DEADLINE, f"the go file {go}", interval=POLL)


def _seqs(count: int) -> Iterable[int]:
    return itertools.count() if count < 0 else range(count)


def cmd_send(a: argparse.Namespace) -> None:
    """Send `count` (-1: forever) messages `<sender>:<seq>`; print `ack <seq>` after each send returns."""
    from agentteams.store.file.mailbox import Mailbox

    mailbox = Mailbox()
    sender = str(a.sender)
    _ready_then_go(a.ready, a.go)
    for seq in _seqs(int(a.count)):
        if _orphaned():
            return
        mailbox.send(str(a.team), str(a.to), f"{sender}:{seq}", sender=sender)
        _emit(f"ack {seq}")


def cmd_join(a: argparse.Namespace) -> None:
    from agentteams.store.file.teams import NewMember, TeamStore

    store = TeamStore()
    _ready_then_go(a.ready, a.go)
    member = store.add_member(str(a.team), NewMember(name=str(a.name)))
    _emit(f"joined {member.name} {member.color}")


def cmd_create(a: argparse.Namespace) -> None:
    """Create `count` tasks; print `created <id> <subject>` after each."""
    from agentteams.store.file.tasks import TaskStore

    store = TaskStore()
    _ready_then_go(a.ready, a.go)
    for seq in range(int(a.count)):
        subject = f"{a.prefix}-{seq}"
        task = store.create(str(a.team), subject)
        _emit(f"created {task.id} {subject}")


def cmd_claim(a: argparse.Namespace) -> None:
    """Claim until nothing is claimable; print `claimed <id>` after each successful claim."""
    from agentteams.store.file.tasks import TaskStore

    store = TaskStore()
    agent = str(a.agent)
    _ready_then_go(a.ready, a.go)
    while True:
        result = store.claim_next(str(a.team), agent)
        if not result.success:
            _emit(f"done {result.reason}")
            return
        assert result.task is not None
        _emit(f"claimed {result.task.id}")


def cmd_ccsend(a: argparse.Namespace) -> None:
    """The real CLI's writer: print `ok <seq> <msg_id>` or `fail <seq>` (LockFailed: not sent)."""
    from tests.support import ccref

    inbox = Path(a.inbox)
    sender = str(a.sender)
    _ready_then_go(a.ready, a.go)
    for seq in range(int(a.count)):
        try:
            env = ccref.send(inbox, sender, f"{sender}:{seq}")
        except ccref.LockFailed:
            _emit(f"fail {seq}")
        else:
            _emit(f"ok {seq} {env['msg_id']}")


def cmd_ccprune(a: argparse.Namespace) -> None:
    """The real CLI's reader: prune until the stop file appears, then once more; one JSON line per take."""
    from tests.support import ccref

    inbox, stop = Path(a.inbox), Path(a.stop)
    _ready_then_go(a.ready, a.go)
    prunes = fails = 0
    while not _orphaned():
        last = stop.exists()
        try:
            taken = ccref.prune_delivered(inbox)
        except ccref.LockFailed:
            fails += 1
            if last:
                continue  # the final prune must happen; the writers are gone, so it soon will
        else:
            prunes += 1
            for env in taken:
                _emit("took " + json.dumps(env))
            if last:
                break
        time.sleep(0.002)
    _emit(f"prunes {prunes} fails {fails}")


def cmd_taskloop(a: argparse.Namespace) -> None:
    """Forever: update a task's description and metadata; every 10th step create a task."""
    from agentteams.store.file.tasks import TaskStore

    store = TaskStore()
    team, ids = str(a.team), str(a.ids).split(",")
    _ready_then_go(a.ready, a.go)
    for n in itertools.count():
        if _orphaned():
            return
        if n % 10 == 9:
            task = store.create(team, f"{a.name}-{n}")
            _emit(f"created {task.id}")
        else:
            tid = ids[n % len(ids)]
            store.update(team, tid, description=f"{a.name} step {n}", metadata={"by": a.name, "n": n})
            _emit(f"updated {tid} {n}")


def cmd_joinloop(a: argparse.Namespace) -> None:
    """Forever: add a member, and remove the one added before it (keeps the config small)."""
    from agentteams.store.file.teams import NewMember, TeamStore

    store = TeamStore()
    team = str(a.team)
    _ready_then_go(a.ready, a.go)
    previous: str | None = None
    for n in itertools.count():
        if _orphaned():
            return
        member = store.add_member(team, NewMember(name=f"{a.name}-{n}"))
        _emit(f"joined {member.name}")
        if previous is not None:
            store.remove_member(team, previous)
            _emit(f"left {previous}")
        previous = member.name


def _check_one(path: Path, kind: str) -> str | None:
    """None when `path` holds valid JSON of the right shape, else what is wrong."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return "missing"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return f"invalid JSON ({e}); {len(raw)} bytes: {raw[:80]!r}...{raw[-80:]!r}"
    if kind == "inbox" and not isinstance(data, list):
        return "inbox is not an array"
    if kind == "config" and not (isinstance(data, dict) and isinstance(data.get("members"), list)):
        return "config has no members list"
    if kind == "task" and not (isinstance(data, dict) and isinstance(data.get("id"), str)):
        return "task has no id"
    return None


def cmd_check(a: argparse.Namespace) -> None:
    """Until the stop file appears, read every watched file over and over; print `BAD ...` per bad read."""
    stop, task_dir = Path(a.stop), Path(a.task_dir)
    fixed = [(Path(a.inbox), "inbox"), (Path(a.config), "config")]
    if a.ready:
        Path(a.ready).touch()
    reads = bad = 0
    while not stop.exists() and not _orphaned():
        for path, kind in [*fixed, *((p, "task") for p in sorted(task_dir.glob("*.json")))]:
            reads += 1
            problem = _check_one(path, kind)
            if problem is not None:
                bad += 1
                _emit(f"BAD {path}: {problem}")
    _emit(f"reads {reads} bad {bad}")


def cmd_hold(a: argparse.Namespace) -> None:
    """Hold our lock on `target` for `seconds` (or until the `--release` file appears), with the ready file
    touched once it is held."""
    from agentteams.store.fs.locking import locked

    release = Path(a.release) if a.release else None
    with locked(Path(a.target)):
        Path(a.ready).touch()
        until = time.monotonic() + float(a.seconds)
        while time.monotonic() < until and not _orphaned() and not (release and release.exists()):
            time.sleep(0.05)
    _emit("released")


def _stop_before_first_replace() -> None:
    """Make this process SIGSTOP itself once, in its first atomic write under a lock: after it read the file and
    wrote its new version to a temporary file, before the check that its lock is still its own and the rename.
    Prints `stopping` just before."""
    import signal

    from agentteams.store.fs import atomic_json as atomicjson

    stopped: list[bool] = []

    def stop_once() -> None:
        if not stopped:
            stopped.append(True)
            _emit("stopping")
            os.kill(os.getpid(), signal.SIGSTOP)  # resumed by the test's SIGCONT, holding a stale read

    real_check: Callable[[], None] | None = getattr(atomicjson, "check_held", None)
    if real_check is None:  # a build without the check (to see these tests fail there): stop before the rename
        real_replace = os.replace

        def stop_then_replace(src: Any, dst: Any) -> None:
            stop_once()
            real_replace(src, dst)

        setattr(os, "replace", stop_then_replace)  # noqa: B010 - mypy: the stand-in takes fewer arguments
        return

    def stop_then_check() -> None:
        stop_once()
        assert real_check is not None
        real_check()

    setattr(atomicjson, "check_held", stop_then_check)  # noqa: B010 - the module's own global, not an attribute


def cmd_stopsend(a: argparse.Namespace) -> None:
    """Send one message `<sender>:0`, stopped once mid-write (`_stop_before_first_replace`); `ack 0` when sent."""
    from agentteams.store.file.mailbox import Mailbox

    mailbox = Mailbox()
    _stop_before_first_replace()
    mailbox.send(str(a.team), str(a.to), f"{a.sender}:0", sender=str(a.sender))
    _emit("ack 0")


def cmd_stopjoin(a: argparse.Namespace) -> None:
    """Add member `name`, stopped once mid-write (`_stop_before_first_replace`); `joined <name>` when added."""
    from agentteams.store.file.teams import NewMember, TeamStore

    store = TeamStore()
    _stop_before_first_replace()
    member = store.add_member(str(a.team), NewMember(name=str(a.name)))
    _emit(f"joined {member.name}")


def cmd_stopupdate(a: argparse.Namespace) -> None:
    """Set task `task_id`'s description, stopped once mid-write (`_stop_before_first_replace`); `updated` when done."""
    from agentteams.store.file.tasks import TaskStore

    store = TaskStore()
    _stop_before_first_replace()
    store.update(str(a.team), str(a.task_id), description=str(a.description))
    _emit("updated")


def cmd_ccjoin(a: argparse.Namespace) -> None:
    """The real CLI's config writer (its lock rule, read-modify-write): add a copy of the last member as `name`."""
    from tests.support import ccref

    def add(config: Any) -> Any:
        member = {**config["members"][-1], "name": str(a.name), "agentId": f"{a.name}@{config['name']}"}
        return {**config, "members": [*config["members"], member]}

    ccref.locked_update(Path(a.config), add)
    _emit(f"joined {a.name}")


def cmd_foreignlock(a: argparse.Namespace) -> None:
    """Take a lock the way the real CLI does (`mkdir`); touch it every second if `--refresh`.

    Without `--release` it holds until killed; with it, it rmdirs once that file appears.
    """
    lock_dir = Path(a.lock_dir)
    os.mkdir(lock_dir)
    Path(a.ready).touch()
    release = Path(a.release) if a.release else None
    last_touch = time.monotonic()
    while (release is None or not release.exists()) and not _orphaned():
        if a.refresh and time.monotonic() - last_touch >= 1.0:
            os.utime(lock_dir)
            last_touch = time.monotonic()
        time.sleep(0.01)
    os.rmdir(lock_dir)
    _emit("released")


def cmd_stalecheck(a: argparse.Namespace) -> None:
    """The CLI's stale test (`now - mtime > 10 s`) on `lock_dir`, in a loop until the stop file appears.

    Prints `age <max seconds seen> samples <n> stale <n>`; never removes anything.
    """
    from tests.support import ccref

    lock_dir, stop = Path(a.lock_dir), Path(a.stop)
    Path(a.ready).touch()
    oldest = 0.0
    samples = stale = 0
    while not stop.exists() and not _orphaned():
        try:
            age = time.time() - os.stat(lock_dir).st_mtime
        except FileNotFoundError:
            time.sleep(0.01)
            continue
        samples += 1
        oldest = max(oldest, age)
        if age > ccref.STALE:
            stale += 1
        time.sleep(0.01)
    _emit(f"age {oldest:.3f} samples {samples} stale {stale}")


COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], None], Sequence[str]]] = {
    "send": (cmd_send, ("team", "to", "sender", "count")),
    "join": (cmd_join, ("team", "name")),
    "create": (cmd_create, ("team", "prefix", "count")),
    "claim": (cmd_claim, ("team", "agent")),
    "ccsend": (cmd_ccsend, ("inbox", "sender", "count")),
    "ccprune": (cmd_ccprune, ("inbox", "stop")),
    "taskloop": (cmd_taskloop, ("team", "name", "ids")),
    "joinloop": (cmd_joinloop, ("team", "name")),
    "check": (cmd_check, ("inbox", "config", "task_dir", "stop")),
    "hold": (cmd_hold, ("target", "seconds", "ready")),
    "stopsend": (cmd_stopsend, ("team", "to", "sender")),
    "stopjoin": (cmd_stopjoin, ("team", "name")),
    "stopupdate": (cmd_stopupdate, ("team", "task_id", "description")),
    "ccjoin": (cmd_ccjoin, ("config", "name")),
    "foreignlock": (cmd_foreignlock, ("lock_dir", "ready")),
    "stalecheck": (cmd_stalecheck, ("lock_dir", "stop", "ready")),
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="tests.support.workers")
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name, (_, params) in COMMANDS.items():
        p = sub.add_parser(name)
        for param in params:
            p.add_argument(param)
        if "ready" not in params:
            p.add_argument("--ready")
        p.add_argument("--go")
        p.add_argument("--release")
        p.add_argument("--refresh", action="store_true")
    args = parser.parse_args(argv)
    COMMANDS[str(args.cmd)][0](args)


# -- parent side -------------------------------------------------------------------------------------


class Worker:
    """One child process; its stdout and stderr go to files under `logs`."""

    def __init__(self, name: str, args: Sequence[str], env: dict[str, str], logs: Path) -> None:
        self.name = name
        self.out = logs / f"{name}.out"
        self.err = logs / f"{name}.err"
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc: subprocess.Popen[bytes] = subprocess.Popen(
                [sys.executable, "-m", "tests.support.workers", *args], cwd=ROOT, env=env, stdout=out,
                stderr=err,
            )  # fmt: skip

    def lines(self) -> list[str]:
        """Complete stdout lines (a line cut short by a kill is dropped)."""
        raw = self.out.read_text(encoding="utf-8")
        return raw.split("\n")[:-1]

    def stderr(self) -> str:
        return self.err.read_text(encoding="utf-8", errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)

    def finish(self, timeout: float) -> list[str]:
        """Wait for a clean exit; returns the stdout lines."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"worker {self.name} still running after {timeout:.0f}s") from None
        assert code == 0, f"worker {self.name} exited {code}:\n{self.stderr()}"
        return self.lines()


class Pool:
    """The workers one test starts; `kill_all` (at teardown) ends whatever still runs."""

    def __init__(self, work: Path, env: dict[str, str]) -> None:
        self.dir = work
        self.dir.mkdir(parents=True, exist_ok=True)
        self.env = env
        self.workers: list[Worker] = []

    def spawn(self, name: str, *args: str) -> Worker:
        worker = Worker(name, args, self.env, self.dir)
        self.workers.append(worker)
        return worker

    def spawn_ready(self, name: str, *args: str, timeout: float = 30.0) -> Worker:
        """Start a worker whose last positional argument is its ready file; return once it exists."""
        ready = self.dir / f"{name}.ready"
        worker = self.spawn(name, *args, str(ready))

        def is_ready() -> bool:
            if worker.proc.poll() is not None and not ready.exists():
                raise AssertionError(f"worker {name} exited early:\n{worker.stderr()}")
            return ready.exists()

        wait_until(is_ready, timeout, f"{name} to be ready")
        return worker

    def kill_all(self) -> None:
        for w in self.workers:
            w.kill()


class Gate(Pool):
    """Start workers, wait until every one is warm, then release them all at once with the go file."""

    def __init__(self, work: Path, env: dict[str, str]) -> None:
        super().__init__(work, env)
        self.go = work / "go"

    def start(self, name: str, *args: str) -> Worker:
        return self.spawn(name, *args, "--ready", str(self.dir / f"{name}.ready"), "--go", str(self.go))

    def release(self, timeout: float = 60.0) -> None:
        def all_ready() -> bool:
            for w in self.workers:
                if w.proc.poll() is not None:
                    raise AssertionError(f"worker {w.name} exited before the start:\n{w.stderr()}")
            return all((self.dir / f"{w.name}.ready").exists() for w in self.workers)

        wait_until(all_ready, timeout, "every worker to be ready")
        self.go.touch()

    def finish(self, timeout: float) -> dict[str, list[str]]:
        """Wait for every worker's clean exit; returns each one's stdout lines."""
        deadline = time.monotonic() + timeout
        try:
            return {w.name: w.finish(max(0.1, deadline - time.monotonic())) for w in self.workers}
        finally:
            self.kill_all()


if __name__ == "__main__":
    main()
