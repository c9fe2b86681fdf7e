"""Model aliases (`sonnet`, `opus`, `haiku`, `fable`, `best`, `opusplan`, `default`) resolved to model ids on the
provider in use (model/catalog.py's tables; `ANTHROPIC_DEFAULT_*_MODEL` overrides them), retired ids remapped, and the
`[1m]` suffix: kept on our model id, taken off the id sent, with the beta that asks for it."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from agentteams.errors import AgentTeamsError
from agentteams.model.catalog import (
    ALIASES,
    NO_LONG_FORM,
    PLAN_MODE,
    RETIRED,
    RETIRED_ON,
    SYNONYMS,
    Alias,
    Host,
    alias_model,
    default_alias,
)
from agentteams.model.providers import alias_id, selected

# alias -> (its model on Anthropic's API, the environment variable that overrides it on any provider)
MODEL_ALIASES: dict[Alias, tuple[str, str]] = {
    alias: (model, f"ANTHROPIC_DEFAULT_{alias.upper()}_MODEL") for alias, model in ALIASES.items()
}
_NAMED: dict[str, Alias] = {alias: alias for alias in ALIASES}
DEFAULT_ALIAS: Alias = "opus"  # 2.1.332's model with an API key and no --model (on Anthropic's API)
LONG_SUFFIX = "[1m]"
LONG_BETA = "context-1m-2025-08-07"
# models whose window is 1M tokens already: a `[1m]` on them asks for nothing more (2.1.332 sends no beta)
NATIVE_LONG = ("claude-opus-4-7", "claude-opus-4-8", "claude-opus-5", "claude-sonnet-5", "claude-haiku-5",
               "claude-fable-5", "claude-mythos-5")  # fmt: skip

# A full id: `claude-…`, a Bedrock id (`anthropic.claude-…`, `us.anthropic.claude-…`), an ARN,
# or any provider-prefixed form (`vertex/claude-…`, `…:claude-…`).
_FULL_ID = re.compile(r"^(claude-|arn:)|[./:]claude-", re.IGNORECASE)
_NAMES_HINT = (f"use an alias ({', '.join([*MODEL_ALIASES, *SYNONYMS, 'default'])}) or a full model id such as "
               f"{MODEL_ALIASES[DEFAULT_ALIAS][0]}")  # fmt: skip


class UnknownModelError(AgentTeamsError):
    """A model name that is neither a known alias nor a full model id."""


def alias_names() -> list[str]:
    """Every accepted alias, `default` last."""
    return [*MODEL_ALIASES, *SYNONYMS, "default"]


def host_of(env: Mapping[str, str]) -> Host:
    """Who serves the model: Anthropic's API, or the provider the environment selects."""
    return selected(env) or "firstParty"


def resolve_model(name: str, env: Mapping[str, str] | None = None) -> str:
    """The model id a name sends: an alias's model on the provider in use (its own id there, `[1m]` kept where the
    model's window is not 1M already), a retired id's successor, else the name as given, as 2.1.332 takes any name
    (`--model`, `ANTHROPIC_MODEL`, `/model`, `set_model`); `UnknownModelError` only for an empty one. `opusplan`
    names what it sends outside plan mode (sonnet's model)."""
    environ = os.environ if env is None else env
    key = name.strip().lower()
    suffix = LONG_SUFFIX if key.endswith(LONG_SUFFIX) else ""
    key = key.removesuffix(suffix)
    host = host_of(environ)
    alias = default_alias(host) if key == "default" else SYNONYMS.get(key) or _NAMED.get(key)
    if alias is not None:
        model = _alias_model(alias, host, environ)
        return model if long_context(model) else model + suffix  # 2.1.332 names a native 1M model without it
    if host in RETIRED_ON and (successor := RETIRED.get(key)) is not None:
        return _alias_model(successor, host, environ)
    if not name.strip():
        raise UnknownModelError(f"no model named: {_NAMES_HINT}")
    return name.strip()


def known_model(name: str, env: Mapping[str, str] | None = None) -> str:
    """`resolve_model`, but a name that is neither an alias nor a full id is an `UnknownModelError` (our team files
    and agent types check their names before anything runs)."""
    key = name.strip().lower().removesuffix(LONG_SUFFIX)
    if key not in _NAMED and key not in SYNONYMS and key != "default" and not _FULL_ID.search(name.strip()):
        raise UnknownModelError(f"unknown model {name!r}: {_NAMES_HINT}")
    return resolve_model(name, env)


def _alias_model(alias: Alias, host: Host, env: Mapping[str, str]) -> str:
    """An override (ANTHROPIC_DEFAULT_*_MODEL) as given, else the alias's model as the provider names it."""
    return env.get(MODEL_ALIASES[alias][1], "").strip() or alias_id(alias_model(alias, host), host, env)


def plan_model(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The model a name sends in plan mode where that differs from `resolve_model`'s (`opusplan`: opus's, `[1m]`
    kept); None for every other name."""
    key = name.strip().lower()
    suffix = LONG_SUFFIX if key.endswith(LONG_SUFFIX) else ""
    alias = PLAN_MODE.get(key.removesuffix(suffix))
    if alias is None:
        return None
    environ = os.environ if env is None else env
    return _alias_model(alias, host_of(environ), environ) + suffix


def switch_refusal(name: str) -> str | None:
    """Why /model and set_model refuse a name that `--model` takes (an alias with no 1M form given `[1m]`), as
    2.1.332 refuses it (the model in use stays); None when the switch may go ahead."""
    key = name.strip().lower()
    alias = key.removesuffix(LONG_SUFFIX)
    if not key.endswith(LONG_SUFFIX) or alias not in NO_LONG_FORM:
        return None
    return (f"'{name.strip()}' isn't available: {alias} comes in no 1M-context form. Run /model {alias}, or "
            f"/model sonnet[1m] for a 1M context window.")  # fmt: skip


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
