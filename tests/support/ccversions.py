"""How the pinned Claude Code versions differ where the interop tests look, so that a test states each difference
once: what a real lead adds to a teammate's argv and environment, and its signatures on lead messages
(/work/shared/interop/REPORT-2.1.330.md §1, §3.1; REPORT-2.1.332.md §0). The versions themselves are in
realclaude.py; where they differ, ours follows the newest."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
    member_prompt: bool  # its lead records a teammate's prompt as the member's `prompt` in the team config
    prompt_stamps: bool  # its transcript's prompt entries carry `sentAtMs` and `rowSource`
    defers_tools: bool  # it offers some tools (WebFetch, ...) only once ToolSearch has loaded them
    # where its alias table differs from 2.1.332's (which ours follows): provider -> name -> (model id sent, 1M beta
    # asked for, Vertex region) (tests/interop/test_interop_aliases.py)
    aliases: Mapping[str, Mapping[str, tuple[str, bool, str | None] | None]] = field(default_factory=dict)
    unknown_providers: tuple[str, ...] = ()  # providers it does not know (it then asks for a login)


_EMPTY_ENV_330 = (
    "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR", "CLAUDE_CODE_ATTRIBUTION_PROJECT",
    "CLAUDE_CODE_USER_DELEGATED_SESSION", "CLAUDE_CODE_USER_DELEGATED_SESSION_ALLOWED_CHECK_MODELS",
    "CLAUDE_CODE_USER_DELEGATED_SESSION_ANY_CHECK_MODEL", "CLAUDE_CODE_USER_DELEGATED_SESSION_DIRECT_API",
    "CLAUDE_CODE_EVEN_MORE_DANGEROUSLY_SKIP_PERMISSIONS",
)  # fmt: skip

# 2.1.332 adds four: two it only fills under CLAUDE_CODE_REMOTE, two it passes on when the lead has them
_EMPTY_ENV_332 = (
    *_EMPTY_ENV_330, "CLAUDE_PROJECT_UUID", "CLAUDE_CODE_SPEND_PROJECT",
    "CLAUDE_CODE_USER_DELEGATED_SESSION_SERVER_CHECK_PROVIDERS",
    "CLAUDE_CODE_USER_DELEGATED_SESSION_ROUTINE_SERVER_CHECK_PROVIDERS",
)  # fmt: skip

# Where an older version's alias table differs from 2.1.332's, per provider (observed: test_interop_aliases.py):
# (model id sent, 1M-context beta, Vertex region), None where it refuses the name (set_model, as /model). 2.1.197:
# older models everywhere, `default` sonnet on Bedrock and Vertex, the 1M beta on models that now have 1M natively;
# 2.1.330: Foundry's older opus and sonnet, Vertex's older sonnet, Mantle's sonnet falling back to haiku.
_ALIASES_197: dict[str, dict[str, tuple[str, bool, str | None] | None]] = {
    "anthropicAws": {
        "opus": ("claude-opus-4-7", False, None), "fable": ("claude-fable-5", False, None),
        "best": ("claude-opus-4-7", False, None), "default": ("claude-opus-4-7", False, None),
        "opus[1m]": ("claude-opus-4-7", True, None), "fable[1m]": ("claude-fable-5", True, None),
    },
    "bedrock": {
        "opus": ("us.anthropic.claude-opus-4-6-v1", False, None), "fable": ("us.anthropic.claude-fable-5", False, None),
        "best": ("us.anthropic.claude-opus-4-6-v1", False, None),
        "default": ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", False, None),
        "opus[1m]": ("us.anthropic.claude-opus-4-6-v1", True, None),
        "fable[1m]": ("us.anthropic.claude-fable-5", True, None),
    },
    "firstParty": {
        "haiku[1m]": ("claude-haiku-4-5-20251001", True, None), "sonnet": ("claude-sonnet-5", False, None),
        "opus": ("claude-opus-4-8", False, None), "haiku": ("claude-haiku-4-5-20251001", False, None),
        "fable": ("claude-fable-5", False, None), "best": ("claude-opus-4-8", False, None),
        "opusplan": ("claude-sonnet-5", False, None), "default": ("claude-opus-4-8", True, None),
        "sonnet[1m]": ("claude-sonnet-5", True, None), "opus[1m]": ("claude-opus-4-8", True, None),
        "fable[1m]": ("claude-fable-5", True, None),
    },
    "foundry": {
        "sonnet": ("claude-sonnet-4-5", False, None), "opus": ("claude-opus-4-6", False, None),
        "fable": ("claude-fable-5", False, None), "best": ("claude-opus-4-6", False, None),
        "opusplan": ("claude-sonnet-4-5", False, None), "default": ("claude-sonnet-4-5", False, None),
        "sonnet[1m]": ("claude-sonnet-4-5", True, None), "opus[1m]": ("claude-opus-4-6", True, None),
        "fable[1m]": ("claude-fable-5", True, None),
    },
    "mantle": {
        "sonnet": ("anthropic.claude-haiku-4-5", False, None), "opus": ("anthropic.claude-opus-4-7", False, None),
        "fable": ("anthropic.claude-fable-5", False, None), "best": ("anthropic.claude-opus-4-7", False, None),
        "opusplan": ("anthropic.claude-haiku-4-5", False, None), "default": ("anthropic.claude-opus-4-7", False, None),
        "sonnet[1m]": ("anthropic.claude-haiku-4-5", True, None), "opus[1m]": ("anthropic.claude-opus-4-7", True, None),
        "fable[1m]": ("anthropic.claude-fable-5", True, None),
    },
    "vertex": {
        "sonnet": ("claude-sonnet-4-5@20250929", False, "europe-west1"),
        "opus": ("claude-opus-4-6", False, "europe-west1"), "fable": ("claude-fable-5", False, "europe-west1"),
        "best": ("claude-opus-4-6", False, "europe-west1"),
        "opusplan": ("claude-sonnet-4-5@20250929", False, "europe-west1"),
        "default": ("claude-sonnet-4-5@20250929", False, "europe-west1"),
        "sonnet[1m]": ("claude-sonnet-4-5@20250929", True, "europe-west1"),
        "opus[1m]": ("claude-opus-4-6", True, "europe-west1"), "fable[1m]": ("claude-fable-5", True, "europe-west1"),
    },
}  # fmt: skip
_ALIASES_330: dict[str, dict[str, tuple[str, bool, str | None] | None]] = {
    "foundry": {
        "sonnet": ("claude-sonnet-4-5", False, None), "opus": ("claude-opus-4-6", False, None),
        "best": ("claude-opus-4-6", False, None), "opusplan": ("claude-sonnet-4-5", False, None),
        "default": ("claude-sonnet-4-5", False, None), "sonnet[1m]": ("claude-sonnet-4-5", True, None),
        "opus[1m]": ("claude-opus-4-6", True, None),
    },
    "mantle": {
        "sonnet": ("anthropic.claude-haiku-4-5", False, None), "opusplan": ("anthropic.claude-haiku-4-5", False, None),
        "sonnet[1m]": None,
    },
    "vertex": {
        "sonnet": ("claude-sonnet-4-5@20250929", False, "europe-west1"),
        "opusplan": ("claude-sonnet-4-5@20250929", False, "europe-west1"),
        "sonnet[1m]": ("claude-sonnet-4-5@20250929", True, "europe-west1"),
    },
}  # fmt: skip

TRAITS: dict[str, Traits] = {
    "2.1.197": Traits(signs=False, empty_env=(), default_model="claude-opus-4-8", result_in_idle=False,
                      member_prompt=True, prompt_stamps=False, defers_tools=False, aliases=_ALIASES_197,
                      unknown_providers=("anthropicGoogleCloud",)),
    "2.1.330": Traits(signs=True, empty_env=_EMPTY_ENV_330, default_model="claude-opus-5-5", result_in_idle=True,
                      member_prompt=True, prompt_stamps=False, defers_tools=True, aliases=_ALIASES_330),
    "2.1.332": Traits(signs=True, empty_env=_EMPTY_ENV_332, default_model="claude-opus-5-5", result_in_idle=True,
                      member_prompt=False, prompt_stamps=True, defers_tools=True),
}  # fmt: skip
assert tuple(TRAITS) == VERSIONS, "every pinned version needs its traits"
SIGNING = tuple(v for v, t in TRAITS.items() if t.signs)  # the versions that take a lead key and check signatures


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
