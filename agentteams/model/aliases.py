"""Model aliases (`sonnet`, `opus`, `haiku`, `default`) and their resolution to full model ids, and the `[1m]`
suffix (a 1M-token context): kept on our model id, taken off the id sent, with the beta that asks for it.

The alias tables live here and nowhere else; `ANTHROPIC_DEFAULT_*_MODEL` overrides them, as in Claude Code.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from agentteams.errors import AgentTeamsError
from agentteams.model.providers import selected

# alias -> (current model id, environment variable that overrides it): what Claude Code 2.1.330 sends, seen against
# the scripted server (tests/interop/test_interop_models.py)
MODEL_ALIASES: dict[str, tuple[str, str]] = {
    "sonnet": ("claude-sonnet-5-5", "ANTHROPIC_DEFAULT_SONNET_MODEL"),
    "opus": ("claude-opus-5-5", "ANTHROPIC_DEFAULT_OPUS_MODEL"),
    "haiku": ("claude-haiku-5-5", "ANTHROPIC_DEFAULT_HAIKU_MODEL"),
}
DEFAULT_ALIAS = "opus"  # 2.1.330's model with an API key and no --model
LONG_SUFFIX = "[1m]"
LONG_BETA = "context-1m-2025-08-07"
# models whose window is 1M tokens already: a `[1m]` on them asks for nothing more (2.1.330 sends no beta)
NATIVE_LONG = ("claude-opus-4-8", "claude-opus-5", "claude-sonnet-5", "claude-haiku-5")
# On Bedrock and Vertex the aliases name older models (a provider offers a model later), as the real Claude Code
# 2.1.197 resolves them there, seen against the scripted server (tests/interop/test_interop_providers.py)
PROVIDER_ALIASES = {"sonnet": "claude-sonnet-4-5", "opus": "claude-opus-4-6", "haiku": "claude-haiku-4-5"}

# A full id: `claude-…`, a Bedrock id (`anthropic.claude-…`, `us.anthropic.claude-…`), an ARN,
# or any provider-prefixed form (`vertex/claude-…`, `…:claude-…`).
_FULL_ID = re.compile(r"^(claude-|arn:)|[./:]claude-", re.IGNORECASE)


class UnknownModelError(AgentTeamsError):
    """A model name that is neither a known alias nor a full model id."""


def alias_names() -> list[str]:
    """Every accepted alias, `default` last."""
    return [*MODEL_ALIASES, "default"]


def resolve_model(name: str, env: Mapping[str, str] | None = None) -> str:
    """Return the full model id for an alias or a full id; raise `UnknownModelError` for anything else."""
    environ = os.environ if env is None else env
    key = name.strip().lower()
    suffix = LONG_SUFFIX if key.endswith(LONG_SUFFIX) else ""
    key = key.removesuffix(suffix)
    if key == "default":  # on Bedrock and Vertex, 2.1.197's default was its sonnet there
        key = "sonnet" if selected(environ) else DEFAULT_ALIAS
    if key in MODEL_ALIASES:
        model_id, variable = MODEL_ALIASES[key]
        override = environ.get(variable, "").strip()
        return (override or (PROVIDER_ALIASES[key] if selected(environ) else model_id)) + suffix
    stripped = name.strip()
    if stripped and _FULL_ID.search(stripped):
        return stripped
    raise UnknownModelError(
        f"unknown model {name!r}: use an alias ({', '.join(alias_names())}) or a full model id such as "
        f"{MODEL_ALIASES[DEFAULT_ALIAS][0]}"
    )


def long_context(model: str) -> bool:
    """A 1M-token window: a `[1m]` id, or a model that has one of its own."""
    bare = model.lower().removesuffix(LONG_SUFFIX)
    return model.lower().endswith(LONG_SUFFIX) or any(m in bare for m in NATIVE_LONG)


def wire_model(model: str) -> tuple[str, list[str]]:
    """The id the API is sent (no `[1m]`) and the betas that id needs (the 1M context's, unless it is native)."""
    if not model.lower().endswith(LONG_SUFFIX):
        return model, []
    bare = model[: -len(LONG_SUFFIX)]
    return bare, [] if any(m in bare.lower() for m in NATIVE_LONG) else [LONG_BETA]
