"""Model aliases (`sonnet`, `opus`, `haiku`, `default`) and their resolution to full model ids.

The alias tables live here and nowhere else; `ANTHROPIC_DEFAULT_*_MODEL` overrides them, as in Claude Code.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from agentteams.errors import AgentTeamsError
from agentteams.model.providers import selected

# alias -> (current model id, environment variable that overrides it)
MODEL_ALIASES: dict[str, tuple[str, str]] = {
    "sonnet": ("claude-sonnet-4-6", "ANTHROPIC_DEFAULT_SONNET_MODEL"),
    "opus": ("claude-opus-4-8", "ANTHROPIC_DEFAULT_OPUS_MODEL"),  # what Claude Code 2.1.197 wrote
    "haiku": ("claude-haiku-4-5", "ANTHROPIC_DEFAULT_HAIKU_MODEL"),
}
DEFAULT_ALIAS = "sonnet"
# On Bedrock and Vertex the aliases name older models (a provider offers a model later), as the real Claude Code
# 2.1.197 resolves them there, seen against the scripted server (tests/test_interop_providers.py)
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
    if key == "default":
        key = DEFAULT_ALIAS
    if key in MODEL_ALIASES:
        model_id, variable = MODEL_ALIASES[key]
        override = environ.get(variable, "").strip()
        return override or (PROVIDER_ALIASES[key] if selected(environ) else model_id)
    stripped = name.strip()
    if stripped and _FULL_ID.search(stripped):
        return stripped
    raise UnknownModelError(
        f"unknown model {name!r}: use an alias ({', '.join(alias_names())}) or a full model id such as "
        f"{MODEL_ALIASES[DEFAULT_ALIAS][0]}"
    )
