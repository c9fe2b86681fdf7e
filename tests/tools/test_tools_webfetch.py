"""WebFetch against a local HTTPS server: an HTML page becomes markdown (and goes to the small model with the
prompt), a redirect to another host is reported and not followed, a 10 MB body is refused, a stalled server times
out, http is upgraded, and `WebFetch(domain:…)` rules deny or allow by host."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentteams.agent.permissions.policy import PermissionPolicy, parse_rules
from agentteams.agent.permissions.web_rules import domain_covered
from agentteams.agent.session import Session, SessionOptions
from agentteams.model.types import ModelRequest, ModelResponse, Usage
from agentteams.store.paths import Layout
from agentteams.tools.base import ToolContext, ToolInputError, ToolResult
from agentteams.tools.web import fetch as webfetch
from agentteams.tools.web.fetch import WebFetchTool
from tests.support.fake_model import FakeModel, text, tool
from tests.support.webserver import WebSite, serve


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebSite]:
    with serve(tmp_path) as web:
        monkeypatch.setenv("SSL_CERT_FILE", str(web.cert))  # httpx trusts the test certificate
        yield web


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, store=None, session_id="s")  # type: ignore[arg-type]


def fetch(ctx: ToolContext, url: str, prompt: str = "What does it say?") -> ToolResult:
    return WebFetchTool().run({"url": url, "prompt": prompt}, ctx)


def test_an_html_page_becomes_markdown(ctx: ToolContext, site: WebSite) -> None:
    result = fetch(ctx, f"{site.base}/page")
    assert not result.is_error, result.content
    assert "Hello\n=====" in result.content and "Some **bold** text and a [link](/x)." in result.content
    assert "hidden" not in result.content and "p{}" not in result.content  # scripts and styles dropped
    assert result.data is not None and result.data["code"] == 200


def test_the_small_model_answers_the_prompt_over_the_page(ctx: ToolContext, site: WebSite) -> None:
    asked: list[ModelRequest] = []

    def ask(request: ModelRequest) -> ModelResponse:
        asked.append(request)
        return ModelResponse([{"type": "text", "text": "It greets you."}], "end_turn", Usage(5, 3), request.model)

    ctx.hooks.ask_model = ask
    result = fetch(ctx, f"{site.base}/page", "PROMPT-MARK what is the heading?")
    assert result.content == "It greets you."
    [request] = asked
    assert request.model.startswith("claude-haiku") and request.tools == [] and request.server_tools == []
    said = request.messages[0]["content"]
    assert "Hello\n=====" in said and "PROMPT-MARK what is the heading?" in said


def test_http_is_upgraded_and_same_host_redirects_are_followed(ctx: ToolContext, site: WebSite) -> None:
    result = fetch(ctx, f"http://127.0.0.1:{site.port}/same")
    assert not result.is_error and "Hello" in result.content, result.content
    assert site.paths == ["/same", "/page"]


def test_a_redirect_to_another_host_is_reported_not_followed(ctx: ToolContext, site: WebSite) -> None:
    result = fetch(ctx, f"{site.base}/elsewhere", "the prompt")
    assert not result.is_error
    assert f"Redirect URL: https://localhost:{site.port}/page" in result.content
    assert f"Original URL: {site.base}/elsewhere" in result.content and '"the prompt"' in result.content
    assert site.paths == ["/elsewhere"]


@pytest.mark.parametrize("path", ["/big", "/big-chunked"])
def test_a_body_over_10_mb_is_refused(ctx: ToolContext, site: WebSite, path: str) -> None:
    result = fetch(ctx, f"{site.base}{path}")
    assert result.is_error and "10 MB" in result.content, result.content


def test_a_stalled_server_times_out(ctx: ToolContext, site: WebSite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(webfetch, "TIMEOUT_S", 1.0)
    started = time.monotonic()
    result = fetch(ctx, f"{site.base}/slow")
    assert result.is_error and "Timed out after 1 s" in result.content
    assert time.monotonic() - started < 10  # a generous bound: the limit is 1 s


def test_an_error_status_is_said_and_a_bad_url_refused(ctx: ToolContext, site: WebSite) -> None:
    result = fetch(ctx, f"{site.base}/nothing")
    assert not result.is_error and "HTTP 404" in result.content
    for bad in ("not a url", "ftp://example.com/x", "https://"):
        with pytest.raises(ToolInputError, match="Invalid URL"):
            fetch(ctx, bad)


def test_domain_patterns() -> None:
    assert domain_covered("domain:example.com", "example.com")
    assert domain_covered("domain:Example.COM", "example.com.")
    assert not domain_covered("domain:example.com", "docs.example.com")
    assert domain_covered("domain:*.example.com", "docs.example.com")
    assert not domain_covered("domain:*.example.com", "example.com") and not domain_covered("example.com", "x")
    assert WebFetchTool().permission_target({"url": "http://Docs.Example.com/a?b"}) == "docs.example.com"


def decide(rules: dict[str, list[str]], url: str, mode: str = "default") -> str:
    policy = PermissionPolicy(mode=mode, allowed=parse_rules(rules.get("allow", [])),  # type: ignore[arg-type]
                              disallowed=parse_rules(rules.get("deny", [])), interactive=False)  # fmt: skip
    return policy.decide("WebFetch", "web", WebFetchTool().permission_target({"url": url})).behavior


def test_permission_rules_by_domain() -> None:
    assert decide({"allow": ["WebFetch(domain:example.com)"]}, "https://example.com/a") == "allow"
    assert decide({"allow": ["WebFetch(domain:example.com)"]}, "https://other.org/a") == "deny"  # asks: -p denies
    assert decide({"deny": ["WebFetch(domain:example.com)"]}, "https://example.com/", "bypassPermissions") == "deny"
    assert decide({}, "https://example.com/", "bypassPermissions") == "allow"
    policy = PermissionPolicy(interactive=True)
    policy.remember("WebFetch", "example.com")  # "allow always" for this host only
    assert policy.decide("WebFetch", "web", "example.com").behavior == "allow"
    assert policy.decide("WebFetch", "web", "other.org").behavior == "ask"


def run_session(tmp_path: Path, layout: Layout, url: str, **options: Any) -> FakeModel:
    side = [[text("SIDE-ANSWER")]] if options.pop("side", False) else []  # the small model's turn comes second
    model = FakeModel([[tool("WebFetch", url=url, prompt="p")], *side, [text("done")]])
    Session(SessionOptions(cwd=tmp_path, **options), model, layout=layout).run("fetch it")
    return model


def test_a_deny_rule_on_the_domain_refuses_the_fetch(tmp_path: Path, layout: Layout, site: WebSite) -> None:
    model = run_session(tmp_path, layout, f"{site.base}/page", permission_mode="bypassPermissions",
                        disallowed_tools=["WebFetch(domain:127.0.0.1)"])  # fmt: skip
    assert site.paths == [] and "denied" in model.user_text(1).lower(), model.user_text(1)


def test_an_allowed_domain_is_fetched_and_read_by_the_small_model(tmp_path: Path, layout: Layout,
                                                                  site: WebSite) -> None:  # fmt: skip
    model = run_session(tmp_path, layout, f"{site.base}/page", allowed_tools=["WebFetch(domain:127.0.0.1)"], side=True)
    assert site.paths == ["/page"]
    side = model.requests[1]
    assert side.model.startswith("claude-haiku") and "Hello" in side.messages[0]["content"] and side.tools == []
    assert model.user_text(2) == "SIDE-ANSWER"  # the tool result is the small model's answer
