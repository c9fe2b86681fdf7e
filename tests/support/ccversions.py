"""How the pinned Claude Code versions differ where the interop tests look, so that a test states each difference
once: what a real lead adds to a teammate's argv and environment, and its signatures on lead messages
(/work/shared/interop/REPORT-2.1.330.md §1, §3.1). The versions themselves are in realclaude.py."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.realclaude import PINNED, VERSIONS


@dataclass(frozen=True)
class Traits:
    """What one version does differently from the others."""

    signs: bool  # its lead gives a pane teammate `--lead-verify-key <ms>.<key>` and signs what it writes to it
    empty_env: tuple[str, ...]  # variables its lead sets to '' in a teammate's environment
    default_model: str  # the model of a session started without --model
    result_in_idle: bool  # its idle_notification carries `result`: the turn's final text


_EMPTY_ENV_330 = (
    "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR", "CLAUDE_CODE_ATTRIBUTION_PROJECT",
    "CLAUDE_CODE_USER_DELEGATED_SESSION", "CLAUDE_CODE_USER_DELEGATED_SESSION_ALLOWED_CHECK_MODELS",
    "CLAUDE_CODE_USER_DELEGATED_SESSION_ANY_CHECK_MODEL", "CLAUDE_CODE_USER_DELEGATED_SESSION_DIRECT_API",
    "CLAUDE_CODE_EVEN_MORE_DANGEROUSLY_SKIP_PERMISSIONS",
)  # fmt: skip

TRAITS: dict[str, Traits] = {
    "2.1.197": Traits(signs=False, empty_env=(), default_model="claude-opus-4-8", result_in_idle=False),
    "2.1.330": Traits(signs=True, empty_env=_EMPTY_ENV_330, default_model="claude-opus-5-5", result_in_idle=True),
}
assert tuple(TRAITS) == VERSIONS, "every pinned version needs its traits"


def only(*versions: str) -> pytest.MarkDecorator:
    """For a test of what only these versions do: run it against them alone (`claude` follows `claude_version`)."""
    unknown = set(versions) - set(PINNED)
    assert not unknown, f"not pinned: {unknown}"
    return pytest.mark.parametrize("claude_version", versions, ids=[f"cc{v}" for v in versions])


# With its default model, 2.1.330 turns TaskCreate/TaskUpdate/TaskList off unless this is set (REPORT §3.4);
# 2.1.197 ignores it. For a real CLI that has to see or use the task tools.
TASK_TOOLS_ON = {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}

VERIFY_KEY = re.compile(r"(\d+)\.(MCowBQYDK2VwAyEA[\w-]{43})")  # <epoch ms>.<Ed25519 SPKI DER, base64url>
SIG_DOMAIN = "claude-team-lead-entry-v1"


def lead_key_flags(version: str, argv: Sequence[str], not_before_ms: int, not_after_ms: int) -> list[str]:
    """The `--lead-verify-key` pair a real lead of `version` gives, for comparing a whole teammate argv: the pair in
    `argv` when its value has the right shape and time, a pair naming what was wanted when not, [] for a version
    that does not sign. (Comparing with it fails, with a readable difference, whenever the flag is wrong.)"""
    if not TRAITS[version].signs:
        return []
    value = argv[argv.index("--lead-verify-key") + 1] if "--lead-verify-key" in argv[:-1] else None
    found = VERIFY_KEY.fullmatch(value or "")
    if value is None or found is None or not not_before_ms <= int(found.group(1)) <= not_after_ms:
        return ["--lead-verify-key", f"<ms in [{not_before_ms}, {not_after_ms}]>.<Ed25519 SPKI>, not {value!r}"]
    return ["--lead-verify-key", value]


def _b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def lead_sig_valid(envelope: Mapping[str, Any], verify_key: str) -> bool:
    """Whether the envelope's `lead_sig` is the Ed25519 signature, under the key of `--lead-verify-key`, of the
    compact JSON array [domain, msg_id, from, timestamp, text, summary, color, from_plugin] (missing: null)."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_der_public_key

    found = VERIFY_KEY.fullmatch(verify_key)
    sig = envelope.get("lead_sig")
    if found is None or not isinstance(sig, str):
        return False
    key = load_der_public_key(_b64url(found.group(2)))
    assert isinstance(key, Ed25519PublicKey)
    fields = [SIG_DOMAIN, *(envelope.get(k) for k in ("msg_id", "from", "timestamp", "text", "summary", "color",
                                                      "from_plugin"))]  # fmt: skip
    try:
        key.verify(_b64url(sig), json.dumps(fields, separators=(",", ":"), ensure_ascii=False).encode())
    except (InvalidSignature, ValueError):
        return False
    return True
