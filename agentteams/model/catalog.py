"""The models each provider serves under which id, and which model each alias names on each provider, as Claude
Code 2.1.332 sends them (observed against the scripted server: tests/interop/test_interop_aliases.py). The table goes
stale with every release: that test shows the change."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Provider = Literal["bedrock", "vertex", "foundry", "mantle", "anthropicAws", "anthropicGoogleCloud"]
Host = Literal["firstParty", "bedrock", "vertex", "foundry", "mantle", "anthropicAws", "anthropicGoogleCloud"]
Alias = Literal["sonnet", "opus", "haiku", "fable"]
VERTEX_REGION_PREFIX = "VERTEX_REGION_"  # per-model region overrides, e.g. VERTEX_REGION_CLAUDE_4_6_SONNET


@dataclass(frozen=True)
class ProviderIds:
    """One model's id on each provider (None: not served there; the id is then sent as it is)."""

    bedrock: str | None
    vertex: str | None
    foundry: str | None
    mantle: str | None
    anthropicAws: str | None  # the provider's name, as Claude Code spells it
    anthropicGoogleCloud: str | None
    vertex_region_var: str

    def on(self, provider: Provider) -> str | None:
        found: str | None = getattr(self, provider)
        return found


# our model id (the first-party one an alias gives) and the suffix of the variable that overrides the Vertex region
# for it -> its id on Bedrock, Vertex, Foundry, Mantle, Claude Platform on AWS and on Google Cloud: "" where that is
# the usual form (`us.anthropic.<id>`: a `us.` cross-region profile, the region's geography replaces it; `<id>`;
# `<id>`; `anthropic.<id>`; `<id>`; `<id>`), None where the provider does not serve it
_ROWS: tuple[tuple[str, str, str | None, str | None, str | None, str | None, str | None, str | None], ...] = (
    ("claude-3-5-haiku", "3_5_HAIKU", "us.anthropic.claude-3-5-haiku-20241022-v1:0",
     "claude-3-5-haiku@20241022", "", None, "claude-3-5-haiku-20241022", None),
    ("claude-haiku-4-5", "HAIKU_4_5", "us.anthropic.claude-haiku-4-5-20251001-v1:0",
     "claude-haiku-4-5@20251001", "", "", "claude-haiku-4-5-20251001", "claude-haiku-4-5-20251001"),
    ("claude-3-5-sonnet", "3_5_SONNET", "us.anthropic.claude-3-5-sonnet-20241022-v2:0",
     "claude-3-5-sonnet-v2@20241022", "", None, "claude-3-5-sonnet-20241022", None),
    ("claude-3-7-sonnet", "3_7_SONNET", "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
     "claude-3-7-sonnet@20250219", "", None, "claude-3-7-sonnet-20250219", None),
    ("claude-sonnet-4-0", "4_0_SONNET", "us.anthropic.claude-sonnet-4-20250514-v1:0",
     "claude-sonnet-4@20250514", "claude-sonnet-4", None, "claude-sonnet-4-20250514", None),
    ("claude-sonnet-4-5", "4_5_SONNET", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
     "claude-sonnet-4-5@20250929", "", None, "claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929"),
    ("claude-sonnet-4-6", "4_6_SONNET", "",
     "", "", None, "", ""),
    ("claude-opus-4-0", "4_0_OPUS", "us.anthropic.claude-opus-4-20250514-v1:0",
     "claude-opus-4@20250514", "claude-opus-4", None, "claude-opus-4-20250514", None),
    ("claude-opus-4-1", "4_1_OPUS", "us.anthropic.claude-opus-4-1-20250805-v1:0",
     "claude-opus-4-1@20250805", "", None, "claude-opus-4-1-20250805", None),
    ("claude-opus-4-5", "4_5_OPUS", "us.anthropic.claude-opus-4-5-20251101-v1:0",
     "claude-opus-4-5@20251101", "", None, "claude-opus-4-5-20251101", "claude-opus-4-5-20251101"),
    ("claude-opus-4-6", "4_6_OPUS", "us.anthropic.claude-opus-4-6-v1",
     "", "", None, "", ""),
)  # fmt: skip
_USUAL = (
    ("claude-haiku-5-5", "HAIKU_5_5"), ("claude-sonnet-5", "5_SONNET"), ("claude-sonnet-5-5", "5_5_SONNET"),
    ("claude-opus-4-7", "4_7_OPUS"), ("claude-opus-4-8", "4_8_OPUS"), ("claude-opus-5", "5_OPUS"),
    ("claude-opus-5-5", "5_5_OPUS"), ("claude-fable-5", "FABLE_5"), ("claude-fable-5-1", "FABLE_5_1"),
    ("claude-fable-5-2", "FABLE_5_2"),
)  # fmt: skip


def _ids(model: str, suffix: str, given: tuple[str | None, ...] = ("",) * 6) -> ProviderIds:
    usual = (f"us.anthropic.{model}", model, model, f"anthropic.{model}", model, model)
    bedrock, vertex, foundry, mantle, aws, google = (u if g == "" else g for g, u in zip(given, usual, strict=True))
    return ProviderIds(bedrock, vertex, foundry, mantle, aws, google, f"{VERTEX_REGION_PREFIX}CLAUDE_{suffix}")


CATALOG: dict[str, ProviderIds] = {
    **{row[0]: _ids(row[0], row[1], row[2:]) for row in _ROWS},
    **{m: _ids(m, s) for m, s in _USUAL},
}
# the dated first-party ids of the same models
DATED: dict[str, str] = {
    "claude-opus-4-5-20251101": "claude-opus-4-5", "claude-opus-4-1-20250805": "claude-opus-4-1",
    "claude-opus-4-20250514": "claude-opus-4-0", "claude-opus-4": "claude-opus-4-0",
    "claude-sonnet-4-5-20250929": "claude-sonnet-4-5", "claude-sonnet-4-20250514": "claude-sonnet-4-0",
    "claude-sonnet-4": "claude-sonnet-4-0", "claude-3-7-sonnet-20250219": "claude-3-7-sonnet",
    "claude-3-5-sonnet-20241022": "claude-3-5-sonnet", "claude-haiku-4-5-20251001": "claude-haiku-4-5",
    "claude-3-5-haiku-20241022": "claude-3-5-haiku",
}  # fmt: skip

# alias -> its model on Anthropic's API, and where a provider differs, there
ALIASES: dict[Alias, str] = {
    "sonnet": "claude-sonnet-5-5", "opus": "claude-opus-5-5", "haiku": "claude-haiku-5-5", "fable": "claude-fable-5-2",
}  # fmt: skip
PER_PROVIDER: dict[Alias, dict[Provider, str]] = {
    "opus": {},
    "sonnet": {"bedrock": "claude-sonnet-4-5", "mantle": "claude-sonnet-5", "anthropicAws": "claude-sonnet-4-6"},
    "haiku": {"bedrock": "claude-haiku-4-5", "vertex": "claude-haiku-4-5", "foundry": "claude-haiku-4-5",
              "mantle": "claude-haiku-4-5", "anthropicAws": "claude-haiku-4-5",
              "anthropicGoogleCloud": "claude-haiku-4-5"},
    "fable": {},
}  # fmt: skip
# the alias a session without a model (or with `default`) takes: opus, but sonnet on Foundry
DEFAULT_ALIAS: Alias = "opus"
DEFAULT_PER_PROVIDER: dict[Provider, Alias] = {"foundry": "sonnet"}
# aliases that name another's model: `best` the most capable (opus); `opusplan` opus in plan mode, sonnet otherwise
SYNONYMS: dict[str, Alias] = {"best": "opus", "opusplan": "sonnet"}
PLAN_MODE: dict[str, Alias] = {"opusplan": "opus"}
# aliases whose `[1m]` form /model and set_model refuse (2.1.332, on every provider; as --model it is taken)
NO_LONG_FORM: tuple[Alias, ...] = ("haiku",)
# retired first-party ids 2.1.332 sends as the alias's model instead (any case, a `[1m]` dropped), where first-party
# ids are sent: Anthropic's API and the Claude Platform on AWS and Google Cloud; Bedrock, Vertex, Foundry and Mantle
# send them as their own ids (observed with --model, set_model and ANTHROPIC_MODEL; claude-opus-4 is not remapped)
RETIRED: dict[str, Alias] = {
    "claude-opus-4-0": "opus", "claude-opus-4-20250514": "opus", "claude-opus-4-1": "opus",
    "claude-opus-4-1-20250805": "opus",
}  # fmt: skip
RETIRED_ON: tuple[Host, ...] = ("firstParty", "anthropicAws", "anthropicGoogleCloud")


def alias_model(alias: Alias, host: Host) -> str:
    """The model id an alias names on a host (before any ANTHROPIC_DEFAULT_*_MODEL override)."""
    if host == "firstParty":
        return ALIASES[alias]
    return PER_PROVIDER[alias].get(host, ALIASES[alias])


def default_alias(host: Host) -> Alias:
    return DEFAULT_ALIAS if host == "firstParty" else DEFAULT_PER_PROVIDER.get(host, DEFAULT_ALIAS)


def provider_ids(model: str) -> ProviderIds | None:
    key = model.strip()
    return CATALOG.get(DATED.get(key, key))


# the ids a model given in full is mapped from (2.1.332, observed on every provider): Anthropic's own id of each
# model, dated for those published with a date (claude-sonnet-4-5-20250929); their undated names (claude-sonnet-4-5,
# claude-opus-4) are sent as given
_GIVEN: dict[str, ProviderIds] = {
    **{dated: CATALOG[ours] for dated, ours in DATED.items() if "-20" in dated},
    **{ours: ids for ours, ids in CATALOG.items() if ours not in DATED.values()},
}


def given_ids(model: str) -> ProviderIds | None:
    """The ids of the model a full id names, where a provider sends it as its own id; None: sent as given."""
    return _GIVEN.get(model.strip())


# a Vertex id given as it is (`--model claude-sonnet-4-5@20250929`) -> its model's ids: Claude Code still takes that
# model's VERTEX_REGION_* override for it (observed: 2.1.197 to 2.1.332)
_BY_VERTEX_ID: dict[str, ProviderIds] = {ids.vertex: ids for ids in CATALOG.values() if ids.vertex is not None}


def vertex_ids(model: str) -> ProviderIds | None:
    """The ids of the model `model` names, whether ours or Vertex's own id of it."""
    return provider_ids(model) or _BY_VERTEX_ID.get(model.strip())


# every name of a catalog model (ours, Anthropic's dated id, each provider's id; Bedrock's without its geography)
_KEYS: dict[str, str] = {
    **{(i.removeprefix("us.") if i.startswith("us.anthropic.") else i).lower(): key
       for key, ids in CATALOG.items() for i in (ids.bedrock, ids.vertex, ids.foundry, ids.mantle, ids.anthropicAws,
                                                 ids.anthropicGoogleCloud) if i},
    **{dated.lower(): ours for dated, ours in DATED.items()},
    **{key: key for key in CATALOG},
}  # fmt: skip
_GEOGRAPHY = ("us.", "eu.", "apac.", "global.", "us-gov.")


def same_model(a: str, b: str) -> bool:
    """Whether two names name one model (claude-sonnet-4-5, its dated id, its Vertex or Bedrock id), the `[1m]` form
    apart: 2.1.332's /model says nothing when a switch keeps the model."""
    return _key(a) == _key(b)


def _key(name: str) -> tuple[str, bool]:
    low = name.strip().lower()
    bare = low.removesuffix("[1m]")
    plain = next((bare.removeprefix(g) for g in _GEOGRAPHY if bare.startswith(g + "anthropic.")), bare)
    return _KEYS.get(plain, plain), bare != low
