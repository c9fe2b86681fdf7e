#!/usr/bin/env python
"""What message signatures cost, through the product's own code paths (`Keyring`, `LeadVerifyKey`, `Trust`).

Per spawn, the work signing adds: the lead makes a key for the teammate and signs its prompt (`lead_sig`); the
teammate parses `--lead-verify-key`, makes its own key and judges the prompt. Per message, apart: the writer
seals it (`lead_sig` from a lead to a keyed teammate, else its own signature), and the reader judges it.
The import of `cryptography` is reported apart: it happens off the spawn and wake paths (the lead and a cold
teammate import it on a thread of their own, warm teammates get it from the fork server). Medians of N rounds.

Usage: python scripts/bench_signing.py [--rounds N] [--json PATH]. `bench_team.py` runs it in the same run
as its spawn figures. Targets, reported and never enforced: < 2 ms per spawn, < 0.2 ms per message.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentteams.store.api import new_envelope
from agentteams.store.records import Member, TeamConfig
from agentteams.store.signing import Keyring, LeadVerifyKey
from agentteams.team.trust import Trust

TEAM = "bench"
PROMPT = "You are w1. Work through the open tasks of the team and report to the lead when each is done. " * 4
MESSAGE = "Task #3 is done: the parser handles nested lists now; tests in tests/test_parser.py pass. " * 3
SPAWN_TARGET_MS = 2.0
MESSAGE_TARGET_MS = 0.2


@dataclass
class Signing:
    spawn_us: float  # lead key + signed prompt + the teammate's key parse, own key and judgement of the prompt
    sign_lead_us: float  # a lead message to a keyed teammate: writing its lead_sig
    check_lead_us: float  # the teammate judging it
    sign_peer_us: float  # a member's message: writing its own signature
    check_peer_us: float  # the reader judging it against the member's recorded key
    import_ms: float  # `cryptography`'s Ed25519 in a fresh interpreter (off the hot paths)
    rounds: int


def _config(peer_key: str) -> TeamConfig:
    members = [Member(agent_id=f"team-lead@{TEAM}", name="team-lead", joined_at=1),
               Member(agent_id=f"w1@{TEAM}", name="w1", joined_at=1, verify_key=peer_key)]  # fmt: skip
    return TeamConfig(name=TEAM, created_at=1, lead_agent_id=members[0].agent_id, members=members)


def _spawn_once(lead: Keyring, name: str) -> float:
    t0 = time.perf_counter()
    key = lead.new_lead_key(TEAM, name)
    prompt = new_envelope("team-lead", PROMPT)
    lead.seal(TEAM, name, prompt)
    # the teammate's side
    parsed = LeadVerifyKey.parse(key.argument())
    mine = Keyring()
    mine.member_key(TEAM, name)
    verdict = Trust(role="teammate", lead_key=parsed).judge(prompt, None)
    elapsed = time.perf_counter() - t0
    assert verdict == "verified", verdict
    lead.drop_lead_key(TEAM, name)
    return elapsed * 1e6


def _message_once(writer: Keyring, to: str, sender: str, reader: Trust, config: TeamConfig) -> tuple[float, float]:
    """(µs to seal, µs to judge) one message."""
    env = new_envelope(sender, MESSAGE)
    t0 = time.perf_counter()
    writer.seal(TEAM, to, env)
    t1 = time.perf_counter()
    verdict = reader.judge(env, config)
    t2 = time.perf_counter()
    assert verdict == "verified", verdict
    return (t1 - t0) * 1e6, (t2 - t1) * 1e6


def _medians(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    return round(statistics.median(p[0] for p in pairs), 1), round(statistics.median(p[1] for p in pairs), 1)


def _import_ms() -> float:
    code = (
        "import time; t = time.perf_counter(); "
        "from cryptography.hazmat.primitives.asymmetric import ed25519; print((time.perf_counter() - t) * 1000)"
    )
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
            for _ in range(3)]  # fmt: skip
    return statistics.median(runs)


def measure(rounds: int = 300) -> Signing:
    lead = Keyring()
    lead.adopt(TEAM, "team-lead")
    spawn = statistics.median(_spawn_once(lead, f"w{i}") for i in range(rounds))
    lead_key = lead.new_lead_key(TEAM, "w1")
    peer = Keyring()
    peer.adopt(TEAM, "w1")
    config = _config(peer.member_key(TEAM, "w1").public)
    teammate = Trust(role="teammate", lead_key=LeadVerifyKey.parse(lead_key.argument()))
    to_lead = Trust(role="lead")
    sign_lead, check_lead = _medians([_message_once(lead, "w1", "team-lead", teammate, config) for _ in range(rounds)])
    sign_peer, check_peer = _medians([_message_once(peer, "team-lead", "w1", to_lead, config) for _ in range(rounds)])
    return Signing(round(spawn, 1), sign_lead, check_lead, sign_peer, check_peer, round(_import_ms(), 1), rounds)


def rows(s: Signing) -> list[tuple[str, float, str]]:
    """(figure, value in ms, target) for a table."""
    ms = 1000
    return [
        ("signing per spawn (keys, signed prompt, its check), ms", round(s.spawn_us / ms, 3), f"< {SPAWN_TARGET_MS}"),
        ("signing a lead message (lead_sig), ms", round(s.sign_lead_us / ms, 3), f"< {MESSAGE_TARGET_MS}"),
        ("signing a member message (its own signature), ms", round(s.sign_peer_us / ms, 3), f"< {MESSAGE_TARGET_MS}"),
        ("checking a lead message at the teammate, ms", round(s.check_lead_us / ms, 3), "(reader side)"),
        ("checking a member message at the reader, ms", round(s.check_peer_us / ms, 3), "(reader side)"),
        ("import of cryptography's Ed25519 (off the hot paths), ms", s.import_ms, "-"),
    ]


def print_rows(s: Signing) -> None:
    width = max(len(r[0]) for r in rows(s))
    print(f"{'figure':<{width}}  {'value':>8}  target")
    for name, value, target in rows(s):
        print(f"{name:<{width}}  {value:>8}  {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = measure(args.rounds)
    print_rows(result)
    if args.json:
        args.json.write_text(json.dumps(asdict(result), indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
