"""The environment that points a CLI at one provider served by the scripted server (Anthropic's API, Bedrock, Vertex,
Foundry, Mantle, the Claude Platform on AWS and on Google Cloud), as the interop tests of models and aliases set it."""

from __future__ import annotations

from agentteams.mockapi import MockServer

SKIP = "CLAUDE_CODE_SKIP_{}_AUTH"
# provider -> (its variables, the base URL variable pointed at the scripted server, the path the SDK adds to it)
PROVIDERS: dict[str, tuple[dict[str, str], str | None, str]] = {
    "firstParty": ({}, None, ""),
    "bedrock": ({"CLAUDE_CODE_USE_BEDROCK": "1", SKIP.format("BEDROCK"): "1", "AWS_REGION": "us-east-1"},
                "ANTHROPIC_BEDROCK_BASE_URL", ""),
    "vertex": ({"CLAUDE_CODE_USE_VERTEX": "1", SKIP.format("VERTEX"): "1", "ANTHROPIC_VERTEX_PROJECT_ID": "proj-a",
                "CLOUD_ML_REGION": "europe-west1", "VERTEX_REGION_CLAUDE_HAIKU_4_5": "us-east5"},
               "ANTHROPIC_VERTEX_BASE_URL", "/v1"),
    "foundry": ({"CLAUDE_CODE_USE_FOUNDRY": "1", "ANTHROPIC_FOUNDRY_API_KEY": "foundry-offline-key-0123456789"},
                "ANTHROPIC_FOUNDRY_BASE_URL", ""),  # 2.1.197 takes no CLAUDE_CODE_SKIP_FOUNDRY_AUTH
    "mantle": ({"CLAUDE_CODE_USE_MANTLE": "1", SKIP.format("MANTLE"): "1", "AWS_REGION": "us-east-1"},
               "ANTHROPIC_BEDROCK_MANTLE_BASE_URL", ""),
    "anthropicAws": ({"CLAUDE_CODE_USE_ANTHROPIC_AWS": "1", SKIP.format("ANTHROPIC_AWS"): "1",
                      "AWS_REGION": "us-east-1"}, "ANTHROPIC_AWS_BASE_URL", ""),
    "anthropicGoogleCloud": ({"CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD": "1",
                              SKIP.format("ANTHROPIC_GOOGLE_CLOUD"): "1"}, "ANTHROPIC_GOOGLE_CLOUD_BASE_URL", ""),
}  # fmt: skip


def provider_env(provider: str, server: MockServer) -> dict[str, str]:
    own, url_var, suffix = PROVIDERS[provider]
    return {**own, url_var: server.base_url + suffix} if url_var else dict(own)
