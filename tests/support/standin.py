"""A stand-in teammate program for a real Claude Code lead (CLAUDE_CODE_TEAMMATE_COMMAND), and the test side of it.
It runs as this file (`standin.py standin LOG <claude argv>`), where `tests` is not importable: stdlib and
`agentteams` only."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any


def write_standin(path: Path, log: Path) -> Path:
    """An executable `path` for CLAUDE_CODE_TEAMMATE_COMMAND that runs the stand-in, logging to `log`."""
    line = shlex.join([sys.executable, str(Path(__file__).resolve()), "standin", str(log)])
    path.write_text(f'#!/bin/sh\nexec {line} "$@"\n', encoding="utf-8")
    path.chmod(0o755)
    return path


def read_events(log: Path) -> list[dict[str, Any]]:
    """The stand-in's log: one event per complete line."""
    try:
        raw = log.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in raw.split("\n")[:-1]]


STANDIN_REPLY = "STANDIN-REPLY"


def standin(log: Path, argv: list[str], deadline: float = 60.0) -> int:
    """A minimal teammate: log how it was started, answer the first plain message to the lead, report idle,
    approve a shutdown_request and exit 0. Uses our own mailbox; logs every step as one JSON line."""
    from agentteams.store.file.mailbox import Mailbox
    from agentteams.store.fs.atomic_json import now_iso
    from agentteams.store.paths import Layout
    from agentteams.store.protocol import IdleNotification, ShutdownApproved, ShutdownRequest, parse_message

    def emit(event: str, **data: Any) -> None:
        with log.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"event": event, "t": time.time(), **data}) + "\n")

    emit("start", argv=argv, env=dict(os.environ), cwd=os.getcwd())
    name, team = argv[argv.index("--agent-name") + 1], argv[argv.index("--team-name") + 1]
    mailbox = Mailbox(Layout.from_env())
    seen: set[tuple[str, ...]] = set()
    replied = False
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        fresh = [e for e in mailbox.unread(team, name) if e.identity not in seen]
        for env in fresh:
            seen.add(env.identity)
            emit("got", envelope=env.to_json())
            message = parse_message(env.text)
            if isinstance(message, ShutdownRequest):
                approved = ShutdownApproved(
                    request_id=message.request_id, sender=name, timestamp=now_iso(),
                    pane_id=os.environ.get("TMUX_PANE", ""), backend_type="tmux",
                )  # fmt: skip
                mailbox.send(team, env.sender, approved.to_text(), sender=name)
                mailbox.mark_delivered(team, name, fresh)
                emit("exit", code=0)
                return 0
            if message is None and not replied:
                replied = True
                mailbox.send(team, env.sender, f"{STANDIN_REPLY} from {name}", sender=name, summary="reply")
                idle = IdleNotification(sender=name, timestamp=now_iso())
                mailbox.send(team, env.sender, idle.to_text(), sender=name)
                emit("replied", to=env.sender)
        if fresh:
            mailbox.mark_delivered(team, name, fresh)
        time.sleep(0.05)
    emit("exit", code=3)
    return 3


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "standin":
        return standin(Path(argv[1]), argv[2:])
    print("usage: standin.py standin LOG <teammate argv>", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
