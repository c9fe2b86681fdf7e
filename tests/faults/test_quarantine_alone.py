"""One broken envelope is quarantined alone (issue 14, item 5): a real `agentteams msg read` shows the good messages
around it, the `.corrupt-…` file beside the inbox holds the broken one's exact bytes, and it warns once."""

from __future__ import annotations

import json
from pathlib import Path

from agentteams.store.file.mailbox import Mailbox
from agentteams.store.paths import Layout
from tests.support.builders import team_with_members
from tests.support.cli import Cli
from tests.support.fault_ledger import FaultLedger

BROKEN = b'{\n    "from": "mallory",\n    "text": "cut \xff off,\n    "timestamp": 7\n  }'


def test_a_broken_envelope_costs_only_itself(cli: Cli, layout: Layout, ledger: FaultLedger) -> None:
    team_with_members(layout, "t", "alice")
    box = Mailbox(layout)
    sent = [box.send("t", "alice", f"good {n}", sender="team-lead").msg_id for n in range(4)]
    ledger.writes += len(sent)
    inbox = layout.inbox_file("t", "alice")
    whole = inbox.read_bytes()
    cut = whole.index(b",\n  {", len(whole) // 2)  # between two elements, somewhere in the middle
    inbox.write_bytes(whole[: cut + 4] + BROKEN + b",\n  " + whole[cut + 4 :])
    ledger.faults += 1

    read = cli("msg", "read", "t", "alice", "--json")

    assert read.returncode == 0, read.stderr
    shown = [m["msg_id"] for m in json.loads(read.stdout)]
    ledger.lost += len(set(sent) - set(shown))
    ledger.duplicates += len(shown) - len(set(shown))
    assert shown == sent
    [aside] = corrupt_files(inbox)
    assert aside.read_bytes() == BROKEN
    [warning] = read.stderr.strip().splitlines()
    assert warning.startswith("agentteams: warning: ") and str(aside) in warning and f"{inbox}[" in warning
    again = cli("msg", "read", "t", "alice", "--json")
    assert again.stderr == "" and [m["msg_id"] for m in json.loads(again.stdout)] == sent  # set aside once


def corrupt_files(inbox: Path) -> list[Path]:
    return sorted(inbox.parent.glob(f"{inbox.name}.corrupt-*"))
