"""Signatures on inbox envelopes: Claude Code 2.1.330's `lead_sig` byte for byte, our member signatures, and the
judge of who really wrote a message (replay window, single use, forged voices)."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta

import pytest

from agentteams.store.api import new_envelope
from agentteams.store.records import Envelope, Member, TeamConfig
from agentteams.store.signing import (
    LEAD_DOMAIN,
    LEAD_SIG,
    MEMBER_DOMAIN,
    MEMBER_SIG,
    Keyring,
    LeadVerifyKey,
    SigningKey,
    VerifyKey,
    signed_bytes,
    verifies,
)
from agentteams.team.trust import REPLAY_SLACK_MS, LeadPromises, Trust

# Written by the real Claude Code 2.1.330 lead (interop goldens): the key on carol's command line and the first
# envelope it wrote to her inbox.
REAL_KEY_ARG = "1795433870420.MCowBQYDK2VwAyEAjmhroW98-2NgrGp-4pTafD-bgV7LRlecSMKphahPEtg"
REAL_ENVELOPE = {
    "from": "team-lead", "text": "CAROL-PING hello carol", "summary": "ping carol",
    "timestamp": "2026-11-23T11:37:50.609Z", "msgV": 1, "msg_id": "3cc51556-a869-46b3-b3e6-0e588abe7615",
    "type": "message", "read": False,
    "lead_sig": "KKz8ytwBKDnMmBo7jjbCteS8WPgb1DeGfhAPDfiayHECvHIWTFq7KRMrutUJqq0rxgihdgQEIwZz88EO_NQtDw",
}  # fmt: skip
TEAM = "t"


def real_key() -> LeadVerifyKey:
    key = LeadVerifyKey.parse(REAL_KEY_ARG)
    assert key is not None
    return key


def test_a_real_2_1_330_lead_signature_verifies_and_any_change_breaks_it() -> None:
    env = Envelope.from_json(REAL_ENVELOPE)
    assert verifies(LEAD_DOMAIN, env, real_key().key)
    for field, value in (("text", "CAROL-PING hello carol!"), ("summary", None), ("msg_id", "x"), ("sender", "user")):
        changed = Envelope.from_json(REAL_ENVELOPE)
        setattr(changed, field, value)
        assert not verifies(LEAD_DOMAIN, changed, real_key().key), field
    assert not verifies(MEMBER_DOMAIN, env, real_key().key)  # a lead signature is no member signature


def test_the_signed_bytes_are_json_stringify_of_the_fields() -> None:
    env = Envelope.from_json({**REAL_ENVELOPE, "text": "é \ud800 \u2028", "from_plugin": "p"})
    want = '["claude-team-lead-entry-v1","3cc51556-a869-46b3-b3e6-0e588abe7615","team-lead",'
    want += '"2026-11-23T11:37:50.609Z","é \\ud800 \u2028","ping carol",null,"p"]'
    assert signed_bytes(LEAD_DOMAIN, env) == want.encode("utf-8")


@pytest.mark.parametrize(
    "arg",
    ["", "123", "abc.MCowBQYDK2VwAyEAjmhroW98-2NgrGp-4pTafD-bgV7LRlecSMKphahPEtg", "1.MCow", "1.a+b",
     "1." + REAL_KEY_ARG.split(".")[1][:-2], "1.MCowBQYDK2VwAyEBjmhroW98-2NgrGp-4pTafD-bgV7LRlecSMKphahPEtg"],
)  # fmt: skip
def test_a_malformed_lead_verify_key_is_no_key(arg: str) -> None:
    assert LeadVerifyKey.parse(arg) is None


def test_the_keyring_signs_the_sender_s_voice_and_the_lead_s_last() -> None:
    keyring = Keyring()
    keyring.adopt(TEAM, "team-lead")
    lead_key = keyring.new_lead_key(TEAM, "Alice")
    env = new_envelope("team-lead", "hello", summary="hi")
    keyring.seal(TEAM, "alice", env)
    assert list(env.to_json())[-1] == LEAD_SIG and MEMBER_SIG not in env.extra  # last, as Claude Code writes it
    assert verifies(LEAD_DOMAIN, env, lead_key.key)
    to_bob = new_envelope("team-lead", "hello")  # no lead key for bob: the lead's own voice
    keyring.seal(TEAM, "bob", to_bob)
    member = VerifyKey.parse(keyring.member_key(TEAM, "team-lead").public)
    assert member is not None and verifies(MEMBER_DOMAIN, to_bob, member) and LEAD_SIG not in to_bob.extra
    other = new_envelope("bob", "hello")  # a sender this process does not speak for: nothing signed
    keyring.seal(TEAM, "alice", other)
    assert MEMBER_SIG not in other.extra and LEAD_SIG not in other.extra
    keyring.drop_lead_key(TEAM, "alice")
    again = new_envelope("team-lead", "hello")
    keyring.seal(TEAM, "alice", again)
    assert LEAD_SIG not in again.extra and MEMBER_SIG in again.extra
    assert "private" not in repr(keyring.member_key(TEAM, "team-lead")).lower()


def test_a_lead_s_message_to_a_held_teammate_waits_for_its_new_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A resumed lead's adopted teammate checks a key that died with the old lead: the new lead's words to it wait
    until it is restarted with a new key (`pump` restarts it once it pauses), never reaching the old process."""
    keyring = Keyring()
    keyring.adopt(TEAM, "team-lead")
    pumped: list[str] = []
    paused = threading.Event()

    def pump() -> None:  # what Rekeying does: restart it (a new key) once it has paused
        pumped.append("asked")
        if paused.is_set() and len(pumped) < 1000:
            keyring.new_lead_key(TEAM, "alice")

    keyring.hold(TEAM, "Alice", pump)
    to_bob = new_envelope("team-lead", "not held")
    keyring.seal(TEAM, "bob", to_bob)  # another teammate: at once
    assert MEMBER_SIG in to_bob.extra and not pumped
    env = new_envelope("team-lead", "shutdown")
    sealing = threading.Thread(target=keyring.seal, args=(TEAM, "alice", env))
    sealing.start()
    sealing.join(0.3)
    assert sealing.is_alive() and pumped  # held: asking whether she has paused
    paused.set()
    sealing.join(5)
    assert not sealing.is_alive() and LEAD_SIG in env.extra  # signed with her new key, as her new process checks
    keyring.hold(TEAM, "carol", lambda: None)
    keyring.release(TEAM, "carol")  # gone, or her restart failed: no new key is coming
    to_carol = new_envelope("team-lead", "hi")
    keyring.seal(TEAM, "carol", to_carol)
    assert LEAD_SIG not in to_carol.extra
    monkeypatch.setattr("agentteams.store.signing.HELD_WAIT", 0.2)
    keyring.hold(TEAM, "dave", lambda: None)  # never pauses: the message goes unsigned after the wait
    to_dave = new_envelope("team-lead", "hi")
    keyring.seal(TEAM, "dave", to_dave)
    assert LEAD_SIG not in to_dave.extra and MEMBER_SIG in to_dave.extra


def _config(*members: Member) -> TeamConfig:
    lead = Member(agent_id=f"team-lead@{TEAM}", name="team-lead", joined_at=1)
    return TeamConfig(name=TEAM, created_at=1, lead_agent_id=lead.agent_id, members=[lead, *members])


def _lead_signed(keyring: Keyring, text: str, *, ago_ms: int = 0, sender: str = "team-lead") -> Envelope:
    env = new_envelope(sender, text)
    if ago_ms:
        when = datetime.now(UTC) - timedelta(milliseconds=ago_ms)
        env.timestamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    keyring.seal(TEAM, "alice", env)
    return env


def test_a_teammate_with_a_key_takes_only_the_lead_s_signed_fresh_unused_messages() -> None:
    keyring = Keyring()
    trust = Trust(role="teammate", lead_key=keyring.new_lead_key(TEAM, "alice"))
    config = _config()
    good = _lead_signed(keyring, "work")
    assert trust.judge(good, config) == "verified" and not good.unverified
    assert trust.judge(Envelope.from_json(good.to_json()), config) == "verified"  # judged again: same verdict
    trust.delivered([good])
    replay = Envelope.from_json(good.to_json())
    assert trust.judge(replay, config) == "forged" and replay.unverified
    assert trust.judge(new_envelope("team-lead", "unsigned"), config) == "forged"
    assert trust.judge(new_envelope("Team-Lead ", "another spelling"), config) == "forged"
    assert trust.judge(_lead_signed(keyring, "stale", ago_ms=REPLAY_SLACK_MS + 60_000), config) == "forged"
    assert trust.judge(_lead_signed(keyring, "in the window", ago_ms=REPLAY_SLACK_MS - 60_000), config) == "verified"
    other = Keyring()
    other.new_lead_key(TEAM, "alice")
    assert trust.judge(_lead_signed(other, "another key"), config) == "forged"
    tampered = _lead_signed(keyring, "original")
    tampered.text = "changed"
    assert trust.judge(tampered, config) == "forged"
    no_id = _lead_signed(keyring, "no id")
    no_id.msg_id = None
    assert trust.judge(no_id, config) == "forged"


def test_a_teammate_without_a_key_takes_the_lead_s_word_as_before() -> None:
    trust = Trust(role="teammate")
    assert trust.judge(new_envelope("team-lead", "unsigned, from an older lead"), _config()) == "unverifiable"


def test_a_peer_with_a_recorded_key_must_sign_and_one_without_is_taken_as_it_comes() -> None:
    keyring = Keyring()
    bob_key = keyring.member_key(TEAM, "bob")
    config = _config(Member(agent_id=f"bob@{TEAM}", name="bob", joined_at=1, verify_key=bob_key.public),
                     Member(agent_id=f"carol@{TEAM}", name="carol", joined_at=1))  # fmt: skip
    trust = Trust(role="teammate", lead_key=Keyring().new_lead_key(TEAM, "alice"))
    from_bob = new_envelope("bob", "real bob")
    keyring.seal(TEAM, "alice", from_bob)
    assert trust.judge(from_bob, config) == "verified"
    assert trust.judge(new_envelope("bob", "carol pretending to be bob"), config) == "forged"
    assert trust.judge(new_envelope("carol", "a real claude peer: no key"), config) == "unverifiable"
    shutdown = new_envelope("carol", json.dumps({"type": "shutdown_request", "requestId": "r"}))
    assert trust.judge(shutdown, config) == "forged"  # only the lead may ask, and it signs


def test_a_member_s_key_is_recorded_before_the_first_envelope_it_signs_leaves() -> None:
    # a restarted teammate answered (its approval signed with a new key) while its key write was still under way
    # on another thread: its lead judged the answer against the old key and took it for forged
    keyring, entry, writing, release = Keyring(), {}, threading.Event(), threading.Event()

    def record(public: str) -> None:
        writing.set()
        assert release.wait(10)
        entry["verify_key"] = public

    keyring.adopt(TEAM, "bob", record)
    recorder = threading.Thread(target=keyring.recorded, args=(TEAM, "bob"))
    recorder.start()
    assert writing.wait(10)
    approval = new_envelope("bob", json.dumps({"type": "shutdown_approved", "requestId": "r"}))
    sealer = threading.Thread(target=keyring.seal, args=(TEAM, "team-lead", approval))
    sealer.start()
    sealer.join(0.3)
    assert sealer.is_alive() and MEMBER_SIG not in approval.extra  # held until the key is readable
    release.set()
    sealer.join(10)
    recorder.join(10)
    config = _config(Member(agent_id=f"bob@{TEAM}", name="bob", joined_at=1, verify_key=entry["verify_key"]))
    assert Trust(role="lead").judge(approval, config) == "verified"
    assert keyring.recorded(TEAM, "bob") is False  # once

    first_send = Keyring()  # no turn came first: the first send records it
    seen: list[str] = []
    first_send.adopt(TEAM, "carol", seen.append)
    first_send.seal(TEAM, "team-lead", new_envelope("carol", "hi"))
    assert seen == [first_send.member_key(TEAM, "carol").public]
    first_send.seal(TEAM, "team-lead", new_envelope("carol", "again"))
    assert len(seen) == 1


def test_a_lead_refuses_its_own_voice_and_keyless_in_process_members() -> None:
    trust = Trust(role="lead")
    ghost = Member(agent_id=f"ghost@{TEAM}", name="ghost", joined_at=1, tmux_pane_id="in-process")
    config = _config(ghost, Member(agent_id=f"bob@{TEAM}", name="bob", joined_at=1, tmux_pane_id="%3"))
    for sender in ("team-lead", "user", "SYSTEM", "ghost"):
        assert trust.judge(new_envelope(sender, "hi"), config) == "forged", sender
    assert trust.judge(new_envelope("bob", "a real claude teammate"), config) == "unverifiable"


def test_a_lead_honours_each_shutdown_approval_once_and_only_from_its_teammate() -> None:
    promises = LeadPromises()
    promises.shutdown_sent("alice", "shutdown-1@alice")
    assert not promises.take_approval("bob", "shutdown-1@alice")
    assert not promises.take_approval("alice", "shutdown-2@alice")
    assert promises.take_approval("alice", "shutdown-1@alice")
    assert not promises.take_approval("alice", "shutdown-1@alice")


def test_a_signing_key_never_shows_its_private_half() -> None:
    key = SigningKey.generate()
    assert repr(key) == f"SigningKey(public={key.public!r})" and key.public.startswith("MCowBQYDK2VwAyEA")


@pytest.mark.proc  # 48 interpreters, a few seconds
def test_a_process_ending_during_the_background_import_exits_cleanly() -> None:
    """The import runs on a thread beside the set-up; a process that ends at any moment of it (a `/memory` and
    Ctrl-D) must exit 0, not abort. With a daemon thread, ending during the library's module set-up (a window of
    about a millisecond, 3-5 ms in here) aborted ("FATAL: exception not rethrown"): the runs sweep 0-12 ms."""
    import subprocess
    import sys

    code = (
        "import sys, time; from agentteams.store.signing import warm_up_soon; warm_up_soon(); "
        "time.sleep(int(sys.argv[1]) / 4000)"
    )
    for batch in range(12):
        procs = [
            subprocess.Popen([sys.executable, "-c", code, str(batch * 4 + i)], stderr=subprocess.PIPE, text=True)
            for i in range(4)
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
