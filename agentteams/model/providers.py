"""Which cloud serves the model: Amazon Bedrock or Google Vertex AI, chosen by Claude Code's variables
(`CLAUDE_CODE_USE_BEDROCK` / `CLAUDE_CODE_USE_VERTEX` and their region, project and base URL variables), and the
provider's model ids for ours. No SDK import here: `provider_sdk` builds the clients."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from agentteams.errors import AgentTeamsError
from agentteams.model.urls import check_base_url, display_url

Provider = Literal["bedrock", "vertex"]
LABELS: dict[Provider, str] = {"bedrock": "Amazon Bedrock", "vertex": "Google Vertex AI"}
DEFAULT_BEDROCK_REGION = "us-east-1"  # Claude Code's, without AWS_REGION / AWS_DEFAULT_REGION
DEFAULT_VERTEX_REGION = "us-east5"  # Claude Code's, without CLOUD_ML_REGION
TRUTHY = frozenset({"1", "true", "yes", "on"})
# the variables a teammate needs to reach the same provider (none a secret: those travel as the API key does)
PROVIDER_ENV = (
    "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE",
    "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "ANTHROPIC_BEDROCK_BASE_URL", "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
    "CLOUD_ML_REGION", "ANTHROPIC_VERTEX_PROJECT_ID", "ANTHROPIC_VERTEX_BASE_URL", "CLAUDE_CODE_SKIP_VERTEX_AUTH",
    "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT",
)  # fmt: skip
# the provider credentials: kept out of argv as the API key is, scrubbed from messages and transcripts
AWS_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
CREDENTIAL_ENV = (*AWS_KEYS, "AWS_BEARER_TOKEN_BEDROCK")
VERTEX_REGION_PREFIX = "VERTEX_REGION_"  # per-model region overrides, e.g. VERTEX_REGION_CLAUDE_4_6_SONNET
_AWS_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d+$")  # us-east-1, us-gov-west-1, ap-southeast-2
_VERTEX_REGION = re.compile(r"^(global|us|eu|[a-z]+-[a-z]+\d+)$")  # global, us, eu, us-east5, europe-west1


@dataclass(frozen=True)
class ProviderIds:
    bedrock: str
    vertex: str
    vertex_region_var: str


# Our model ids (the first-party ones the aliases give) -> the providers' ids, as Claude Code's model catalog
# (2.1.330) maps them: Bedrock's cross-region inference profiles (`us.`), Vertex's `@date` versions, and the
# suffix of the variable that overrides the Vertex region for that model (VERTEX_REGION_CLAUDE_<suffix>).
_ROWS = (
    ("claude-opus-4-8", "us.anthropic.claude-opus-4-8", "claude-opus-4-8", "4_8_OPUS"),
    ("claude-opus-4-7", "us.anthropic.claude-opus-4-7", "claude-opus-4-7", "4_7_OPUS"),
    ("claude-opus-4-6", "us.anthropic.claude-opus-4-6-v1", "claude-opus-4-6", "4_6_OPUS"),
    ("claude-opus-4-5", "us.anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5@20251101", "4_5_OPUS"),
    ("claude-opus-4-1", "us.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1@20250805", "4_1_OPUS"),
    ("claude-opus-4-0", "us.anthropic.claude-opus-4-20250514-v1:0", "claude-opus-4@20250514", "4_0_OPUS"),
    ("claude-sonnet-4-6", "us.anthropic.claude-sonnet-4-6", "claude-sonnet-4-6", "4_6_SONNET"),
    ("claude-sonnet-4-5", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5@20250929", "4_5_SONNET"),
    ("claude-sonnet-4-0", "us.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4@20250514", "4_0_SONNET"),
    ("claude-3-7-sonnet", "us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet@20250219", "3_7_SONNET"),
    ("claude-haiku-4-5", "us.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5@20251001", "HAIKU_4_5"),
    ("claude-3-5-haiku", "us.anthropic.claude-3-5-haiku-20241022-v1:0", "claude-3-5-haiku@20241022", "3_5_HAIKU"),
)
CATALOG: dict[str, ProviderIds] = {
    ours: ProviderIds(bedrock, vertex, f"{VERTEX_REGION_PREFIX}CLAUDE_{suffix}")
    for ours, bedrock, vertex, suffix in _ROWS
}
# the dated first-party ids of the same models
DATED: dict[str, str] = {
    "claude-opus-4-5-20251101": "claude-opus-4-5", "claude-opus-4-1-20250805": "claude-opus-4-1",
    "claude-opus-4-20250514": "claude-opus-4-0", "claude-opus-4": "claude-opus-4-0",
    "claude-sonnet-4-5-20250929": "claude-sonnet-4-5", "claude-sonnet-4-20250514": "claude-sonnet-4-0",
    "claude-sonnet-4": "claude-sonnet-4-0", "claude-3-7-sonnet-20250219": "claude-3-7-sonnet",
    "claude-haiku-4-5-20251001": "claude-haiku-4-5", "claude-3-5-haiku-20241022": "claude-3-5-haiku",
}  # fmt: skip


class ProviderError(AgentTeamsError):
    """A provider that cannot be used as configured: a bad region, a missing project, a missing optional extra."""


def truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in TRUTHY


def selected(env: Mapping[str, str]) -> Provider | None:
    """The provider the environment asks for (Bedrock first when both are set, as Claude Code), or None."""
    if truthy(env.get("CLAUDE_CODE_USE_BEDROCK")):
        return "bedrock"
    return "vertex" if truthy(env.get("CLAUDE_CODE_USE_VERTEX")) else None


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

    @property
    def label(self) -> str:
        return LABELS[self.kind]

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ProviderConfig | None:
        """The provider the environment selects, checked (region, project, base URL, optional extra); else None."""
        kind = selected(env)
        if kind is None:
            return None
        config = _bedrock(env) if kind == "bedrock" else _vertex(env)
        require_extra(config)
        return config

    def model_id(self, model: str) -> str:
        """The provider's id for our model id (on Bedrock, the inference profile of this region's geography);
        a provider id (or anything not in the catalog) passes through."""
        ids = _ids(model)
        if ids is None:
            return model
        if self.kind == "vertex":
            return ids.vertex
        return f"{bedrock_geography(self.region)}.{ids.bedrock.removeprefix('us.')}"

    def region_for(self, model: str) -> str:
        """The region a request for `model` goes to: Vertex's per-model override, else the configured one."""
        ids = _ids(model) if self.kind == "vertex" else None
        overrides = dict(self.region_overrides)
        if ids is not None and ids.vertex_region_var in overrides:
            return overrides[ids.vertex_region_var]
        return self.region

    def endpoint(self, region: str) -> str:
        """The base URL requests go to in `region`, as the SDK builds it, fit for a message."""
        if self.base_url:
            return display_url(self.base_url)
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
        if self.kind == "bedrock":
            return "AWS_REGION / ANTHROPIC_BEDROCK_BASE_URL"
        return "CLOUD_ML_REGION / ANTHROPIC_VERTEX_BASE_URL"

    def where(self) -> str:
        """What to check when the endpoint cannot be reached."""
        return f"check {self.url_variables} and the network"

    def auth_hint(self) -> str:
        if self.kind == "bedrock":
            return "check the AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or " \
                "AWS_BEARER_TOKEN_BEDROCK) and the model access in AWS_REGION"  # fmt: skip
        return "check the Google Cloud credentials (gcloud auth application-default login) and the project"

    def secrets(self) -> list[str]:
        return [s for s in (self.aws_secret_key, self.aws_session_token, self.bearer_token) if s]


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


def _ids(model: str) -> ProviderIds | None:
    key = model.strip()
    return CATALOG.get(DATED.get(key, key))


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
