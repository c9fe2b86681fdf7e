"""Which cloud serves the model (Bedrock, Vertex, Foundry, Mantle, Claude Platform on AWS / Google Cloud), chosen by
Claude Code's variables (`CLAUDE_CODE_USE_*` and their region, project, base URL and key variables), and its model
ids for ours (model/catalog.py). No SDK import here: `provider_sdk` builds the clients."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from agentteams.errors import AgentTeamsError
from agentteams.model.catalog import (
    VERTEX_REGION_PREFIX,
    Host,
    Provider,
    given_ids,
    provider_ids,
    vertex_ids,
)
from agentteams.model.urls import check_base_url, display_url

LABELS: dict[Provider, str] = {
    "bedrock": "Amazon Bedrock", "vertex": "Google Vertex AI", "foundry": "Microsoft Foundry",
    "mantle": "Amazon Bedrock (Mantle)", "anthropicAws": "Claude Platform on AWS",
    "anthropicGoogleCloud": "Claude Platform on Google Cloud",
}  # fmt: skip
# each provider's switch, in the order Claude Code 2.1.332 looks at them (the first one set wins)
SWITCHES: tuple[tuple[str, Provider], ...] = (
    ("CLAUDE_CODE_USE_BEDROCK", "bedrock"), ("CLAUDE_CODE_USE_FOUNDRY", "foundry"),
    ("CLAUDE_CODE_USE_ANTHROPIC_AWS", "anthropicAws"),
    ("CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD", "anthropicGoogleCloud"),
    ("CLAUDE_CODE_USE_MANTLE", "mantle"), ("CLAUDE_CODE_USE_VERTEX", "vertex"),
)  # fmt: skip
DEFAULT_BEDROCK_REGION = "us-east-1"  # Claude Code's, without AWS_REGION / AWS_DEFAULT_REGION
DEFAULT_VERTEX_REGION = "us-east5"  # Claude Code's, without CLOUD_ML_REGION
TRUTHY = frozenset({"1", "true", "yes", "on"})
# the variables a teammate needs to reach the same provider (none a secret: those travel as the API key does)
PROVIDER_ENV = (
    "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE",
    "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "ANTHROPIC_BEDROCK_BASE_URL", "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
    "CLOUD_ML_REGION", "ANTHROPIC_VERTEX_PROJECT_ID", "ANTHROPIC_VERTEX_BASE_URL", "CLAUDE_CODE_SKIP_VERTEX_AUTH",
    "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "CLAUDE_CODE_USE_FOUNDRY", "ANTHROPIC_FOUNDRY_BASE_URL",
    "ANTHROPIC_FOUNDRY_RESOURCE", "CLAUDE_CODE_SKIP_FOUNDRY_AUTH", "CLAUDE_CODE_USE_MANTLE",
    "ANTHROPIC_BEDROCK_MANTLE_BASE_URL", "CLAUDE_CODE_SKIP_MANTLE_AUTH", "CLAUDE_CODE_USE_ANTHROPIC_AWS",
    "ANTHROPIC_AWS_BASE_URL", "ANTHROPIC_AWS_WORKSPACE_ID", "CLAUDE_CODE_SKIP_ANTHROPIC_AWS_AUTH",
    "CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD", "ANTHROPIC_GOOGLE_CLOUD_BASE_URL", "ANTHROPIC_GOOGLE_CLOUD_PROJECT",
    "ANTHROPIC_GOOGLE_CLOUD_LOCATION", "ANTHROPIC_GOOGLE_CLOUD_WORKSPACE_ID",
    "CLAUDE_CODE_SKIP_ANTHROPIC_GOOGLE_CLOUD_AUTH",
)  # fmt: skip
# the provider credentials: kept out of argv as the API key is, scrubbed from messages and transcripts
AWS_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
CREDENTIAL_ENV = (*AWS_KEYS, "AWS_BEARER_TOKEN_BEDROCK", "ANTHROPIC_FOUNDRY_API_KEY", "ANTHROPIC_FOUNDRY_AUTH_TOKEN",
                  "ANTHROPIC_AWS_API_KEY")  # fmt: skip
# the providers that serve Anthropic's own Messages API at their address (`<base>/v1/messages`, the model in the body):
# our first-party client goes there, with the provider's credential and model ids
HOSTED: frozenset[Provider] = frozenset({"foundry", "mantle", "anthropicAws", "anthropicGoogleCloud"})
_AWS_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d+$")  # us-east-1, us-gov-west-1, ap-southeast-2
_VERTEX_REGION = re.compile(r"^(global|us|eu|[a-z]+-[a-z]+\d+)$")  # global, us, eu, us-east5, europe-west1


class ProviderError(AgentTeamsError):
    """A provider that cannot be used as configured: a bad region, a missing project, a missing optional extra."""


def truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in TRUTHY


def selected(env: Mapping[str, str]) -> Provider | None:
    """The provider the environment asks for (the first switch set, in Claude Code's order), or None."""
    return next((kind for name, kind in SWITCHES if truthy(env.get(name))), None)


@dataclass(frozen=True)
class ProviderConfig:
    """How to reach one provider. Build it with `from_env()`; its repr shows no credential."""

    kind: Provider
    region: str
    base_url: str | None = None
    project_id: str | None = None  # Vertex only
    skip_auth: bool = False  # a gateway in front of the provider does the auth (CLAUDE_CODE_SKIP_*_AUTH)
    region_overrides: tuple[tuple[str, str], ...] = ()  # (VERTEX_REGION_* variable, region)
    aws_profile: str | None = None
    aws_access_key: str | None = field(default=None, repr=False)
    aws_secret_key: str | None = field(default=None, repr=False)
    aws_session_token: str | None = field(default=None, repr=False)
    bearer_token: str | None = field(default=None, repr=False)  # AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key)
    api_key: str | None = field(default=None, repr=False)  # a hosted provider's key, sent as x-api-key
    headers: tuple[tuple[str, str], ...] = ()  # a hosted provider's own headers (its workspace)

    @property
    def label(self) -> str:
        return LABELS[self.kind]

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ProviderConfig | None:
        """The provider the environment selects, checked (region, project, base URL, optional extra); else None."""
        kind = selected(env)
        if kind is None:
            return None
        if kind in HOSTED:
            return _hosted(kind, env)  # Anthropic's API at the provider's: no SDK, no extra
        config = _bedrock(env) if kind == "bedrock" else _vertex(env)
        require_extra(config)
        return config

    def model_id(self, model: str) -> str:
        """The provider's id for Anthropic's own id of a model (on Bedrock, the inference profile of this region's
        geography); anything else passes through: an alias's id (already the provider's), an undated name, a model
        not in the catalog, and every id on Foundry (2.1.332 sends a dated id there as given)."""
        ids = given_ids(model) if self.kind != "foundry" else None
        found = ids.on(self.kind) if ids is not None else None
        if found is None:
            return model
        return _profile(found, self.region) if self.kind == "bedrock" else found

    def region_for(self, model: str) -> str:
        """The region a request for `model` goes to: Vertex's per-model override, else the configured one."""
        ids = vertex_ids(model) if self.kind == "vertex" else None
        overrides = dict(self.region_overrides)
        if ids is not None and ids.vertex_region_var in overrides:
            return overrides[ids.vertex_region_var]
        return self.region

    def endpoint(self, region: str) -> str:
        """The base URL requests go to in `region`, as the SDK builds it, fit for a message."""
        if self.base_url:
            return display_url(self.base_url)
        if self.kind in HOSTED:
            return ""  # not reached: a hosted provider always has its base URL
        if self.kind == "bedrock":
            return f"https://bedrock-runtime.{region}.amazonaws.com"
        if region == "global":
            return "https://aiplatform.googleapis.com/v1"
        if region in ("us", "eu"):
            return f"https://aiplatform.{region}.rep.googleapis.com/v1"
        return f"https://{region}-aiplatform.googleapis.com/v1"

    def summary(self) -> str:
        """The provider and where: "Amazon Bedrock (eu-west-3)", "Google Vertex AI (us-east5, project p)"."""
        project = f", project {self.project_id}" if self.project_id else ""
        return f"{self.label} ({self.region}{project})"

    @property
    def url_variables(self) -> str:
        """The variables that decide the endpoint."""
        if self.kind in HOSTED:
            return _URL_VARIABLE[self.kind]
        if self.kind == "bedrock":
            return "AWS_REGION / ANTHROPIC_BEDROCK_BASE_URL"
        return "CLOUD_ML_REGION / ANTHROPIC_VERTEX_BASE_URL"

    def where(self) -> str:
        """What to check when the endpoint cannot be reached."""
        return f"check {self.url_variables} and the network"

    def auth_hint(self) -> str:
        if self.kind in HOSTED:
            return f"check {_CREDENTIAL_HINT[self.kind]}"
        if self.kind == "bedrock":
            return "check the AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or " \
                "AWS_BEARER_TOKEN_BEDROCK) and the model access in AWS_REGION"  # fmt: skip
        return "check the Google Cloud credentials (gcloud auth application-default login) and the project"

    def secrets(self) -> list[str]:
        return [s for s in (self.aws_secret_key, self.aws_session_token, self.bearer_token, self.api_key) if s]


def bedrock_geography(region: str) -> str:
    """The cross-region inference profile prefix Claude Code picks for an AWS region: us-gov, us, eu, apac, or
    global for the regions of no such geography (ca-central-1, sa-east-1, ...)."""
    if region.startswith("us-gov-"):
        return "us-gov"
    return {"us": "us", "eu": "eu", "ap": "apac"}.get(region.split("-", 1)[0], "global")


def describe(env: Mapping[str, str]) -> str:
    """The API the model is reached through, in one line: Anthropic's, a provider's summary, or what is wrong."""
    try:
        config = ProviderConfig.from_env(env)
    except AgentTeamsError as e:  # a bad region, a missing project or extra, a bad base URL
        return str(e)
    return "Anthropic API" if config is None else config.summary()


def alias_id(model: str, host: Host, env: Mapping[str, str]) -> str:
    """What an alias's model (ours, e.g. claude-haiku-4-5) is on `host`: the provider's own id (Bedrock's inference
    profile of the region's geography), which 2.1.332 shows as the model in use and sends as it is."""
    if host == "firstParty":
        return model
    ids = provider_ids(model)
    found = ids.on(host) if ids is not None else None
    if found is None:
        return model
    region = _get(env, "AWS_REGION") or _get(env, "AWS_DEFAULT_REGION") or DEFAULT_BEDROCK_REGION
    return _profile(found, region) if host == "bedrock" else found


def _profile(bedrock_id: str, region: str) -> str:
    return f"{bedrock_geography(region)}.{bedrock_id.removeprefix('us.')}"


def _get(env: Mapping[str, str], name: str) -> str | None:
    return env.get(name, "").strip() or None


def _base_url(env: Mapping[str, str], name: str) -> str | None:
    raw = _get(env, name)
    return check_base_url(raw, name) if raw else None


def _bedrock(env: Mapping[str, str]) -> ProviderConfig:
    source = "AWS_REGION" if _get(env, "AWS_REGION") else "AWS_DEFAULT_REGION"
    region = _get(env, "AWS_REGION") or _get(env, "AWS_DEFAULT_REGION") or DEFAULT_BEDROCK_REGION
    if not _AWS_REGION.match(region):
        raise ProviderError(f"{source} {region!r} is not an AWS region (expected e.g. us-east-1 or eu-west-3)")
    return ProviderConfig(
        "bedrock", region, _base_url(env, "ANTHROPIC_BEDROCK_BASE_URL"),
        skip_auth=truthy(env.get("CLAUDE_CODE_SKIP_BEDROCK_AUTH")), aws_profile=_get(env, "AWS_PROFILE"),
        aws_access_key=_get(env, "AWS_ACCESS_KEY_ID"), aws_secret_key=_get(env, "AWS_SECRET_ACCESS_KEY"),
        aws_session_token=_get(env, "AWS_SESSION_TOKEN"), bearer_token=_get(env, "AWS_BEARER_TOKEN_BEDROCK"),
    )  # fmt: skip


def _vertex(env: Mapping[str, str]) -> ProviderConfig:
    region = _get(env, "CLOUD_ML_REGION") or DEFAULT_VERTEX_REGION
    overrides = tuple(sorted((k, v.strip()) for k, v in env.items() if k.startswith(VERTEX_REGION_PREFIX)))
    for name, value in (("CLOUD_ML_REGION", region), *overrides):
        if not _VERTEX_REGION.match(value):
            raise ProviderError(
                f"{name} {value!r} is not a Vertex AI region (expected e.g. us-east5, europe-west1 or global)"
            )
    project = _get(env, "ANTHROPIC_VERTEX_PROJECT_ID")
    if project is None:
        raise ProviderError(
            "CLAUDE_CODE_USE_VERTEX is set but ANTHROPIC_VERTEX_PROJECT_ID is not: set it to your Google Cloud project"
        )
    return ProviderConfig(
        "vertex", region, _base_url(env, "ANTHROPIC_VERTEX_BASE_URL"), project_id=project,
        skip_auth=truthy(env.get("CLAUDE_CODE_SKIP_VERTEX_AUTH")), region_overrides=overrides,
    )  # fmt: skip


_URL_VARIABLE: dict[Provider, str] = {
    "foundry": "ANTHROPIC_FOUNDRY_BASE_URL", "mantle": "ANTHROPIC_BEDROCK_MANTLE_BASE_URL",
    "anthropicAws": "ANTHROPIC_AWS_BASE_URL", "anthropicGoogleCloud": "ANTHROPIC_GOOGLE_CLOUD_BASE_URL",
}  # fmt: skip
_SKIP_VARIABLE: dict[Provider, str] = {
    "foundry": "CLAUDE_CODE_SKIP_FOUNDRY_AUTH", "mantle": "CLAUDE_CODE_SKIP_MANTLE_AUTH",
    "anthropicAws": "CLAUDE_CODE_SKIP_ANTHROPIC_AWS_AUTH",
    "anthropicGoogleCloud": "CLAUDE_CODE_SKIP_ANTHROPIC_GOOGLE_CLOUD_AUTH",
}  # fmt: skip
_CREDENTIAL_HINT: dict[Provider, str] = {
    "foundry": "ANTHROPIC_FOUNDRY_API_KEY or ANTHROPIC_FOUNDRY_AUTH_TOKEN", "mantle": "AWS_BEARER_TOKEN_BEDROCK",
    "anthropicAws": "ANTHROPIC_AWS_API_KEY", "anthropicGoogleCloud": "the gateway in front of it",
}  # fmt: skip


def _hosted(kind: Provider, env: Mapping[str, str]) -> ProviderConfig:
    """Foundry, Mantle, the Claude Platform on AWS or Google Cloud: where (its base URL, or the one its resource or
    region gives) and with which credential. The sign-ins we do not make (Azure's, AWS signatures, Google's) are one
    line naming what to set instead: a key, or a gateway that signs (CLAUDE_CODE_SKIP_*_AUTH)."""
    region = _get(env, "AWS_REGION") or _get(env, "AWS_DEFAULT_REGION") or DEFAULT_BEDROCK_REGION
    if kind == "anthropicGoogleCloud":
        region = _get(env, "ANTHROPIC_GOOGLE_CLOUD_LOCATION") or "global"
    elif not _AWS_REGION.match(region) and kind != "foundry":
        raise ProviderError(f"AWS_REGION {region!r} is not an AWS region (expected e.g. us-east-1 or eu-west-3)")
    url = _base_url(env, _URL_VARIABLE[kind])
    resource = _get(env, "ANTHROPIC_FOUNDRY_RESOURCE")
    if url is None and kind == "foundry" and resource:
        url = f"https://{resource}.services.ai.azure.com/anthropic"
    elif url is None and kind == "mantle":
        url = f"https://bedrock-mantle.{region}.api.aws/anthropic"
    elif url is None and kind == "anthropicAws":
        url = f"https://aws-external-anthropic.{region}.api.aws"
    if url is None:
        more = " or ANTHROPIC_FOUNDRY_RESOURCE" if kind == "foundry" else ""
        raise ProviderError(f"{LABELS[kind]} is selected but {_URL_VARIABLE[kind]}{more} is not set")
    skip = truthy(env.get(_SKIP_VARIABLE[kind]))
    key = _get(env, {"foundry": "ANTHROPIC_FOUNDRY_API_KEY", "anthropicAws": "ANTHROPIC_AWS_API_KEY"}.get(kind, ""))
    token = _get(env, {"foundry": "ANTHROPIC_FOUNDRY_AUTH_TOKEN", "mantle": "AWS_BEARER_TOKEN_BEDROCK"}.get(kind, ""))
    if not (skip or key or token):
        raise ProviderError(
            f"{LABELS[kind]} is selected but {_CREDENTIAL_HINT[kind]} is not set (agentteams makes no cloud sign-in of "
            f"its own: set that, or {_SKIP_VARIABLE[kind]}=1 behind a gateway that signs the requests)"
        )
    workspace = _get(env, "ANTHROPIC_AWS_WORKSPACE_ID") if kind == "anthropicAws" else None
    return ProviderConfig(
        kind, region, url, project_id=_get(env, "ANTHROPIC_GOOGLE_CLOUD_PROJECT"), skip_auth=skip,
        api_key=None if skip else key, bearer_token=None if skip or key else token,
        headers=(("anthropic-workspace-id", workspace),) if workspace else (),
    )  # fmt: skip


# the modules each provider needs beyond the SDK itself, and the extra that installs them
EXTRA_MODULES: dict[Provider, tuple[str, str]] = {
    "bedrock": ("botocore", "AWS SDK (boto3)"),
    "vertex": ("google.auth", "Google auth library (google-auth)"),
}


def missing_extra(config: ProviderConfig) -> str:
    """The one line that says which install a provider needs."""
    _, library = EXTRA_MODULES[config.kind]
    variable = "CLAUDE_CODE_USE_BEDROCK" if config.kind == "bedrock" else "CLAUDE_CODE_USE_VERTEX"
    return (f"{variable} is set but the {library} is not installed: "
            f"pip install 'agentteams[{config.kind}]'")  # fmt: skip


def require_extra(config: ProviderConfig) -> None:
    """Raise `ProviderError` when the provider's optional extra is missing (a lookup, not an import: cheap).
    Vertex behind a gateway (CLAUDE_CODE_SKIP_VERTEX_AUTH) needs no Google library."""
    if config.kind == "vertex" and config.skip_auth:
        return
    module, _ = EXTRA_MODULES[config.kind]
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ProviderError(missing_extra(config))
