"""Anthropic's API without importing the SDK (model/first_party.py, model/sdk_facts.py): what it reads from the SDK's
files is what the imported SDK says, its requests carry the SDK's own headers in the SDK's order for every kind of
credential, a layout it cannot read falls back to asking the SDK, and a `-p`-sized call never imports the SDK."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from agentteams.mockapi import MockServer
from agentteams.model import first_party, sdk_facts
from agentteams.model.answer import Answer
from agentteams.model.anthropic_client import AnthropicClient, build_params
from agentteams.model.config import ModelConfig
from agentteams.model.types import ModelRequest

REQUEST = ModelRequest("claude-x", "s", [], [{"role": "user", "content": "hi"}], max_tokens=8)


@pytest.fixture
def server() -> Iterator[MockServer]:
    with MockServer({"fallback": "ok"}) as s:
        yield s


def test_the_facts_read_from_the_sdk_s_files_are_what_the_imported_sdk_says() -> None:
    from anthropic import _base_client, _constants

    facts = sdk_facts.installed()
    assert facts is not None, "the installed SDK's files no longer say its version, API version or HTTP library"
    assert (facts.version, facts.api_version) == (anthropic.__version__, _constants.ANTHROPIC_API_VERSION)
    http = sys.modules[facts.http_library]
    assert issubclass(anthropic.DefaultHttpxClient, http.Client)
    ours = {k: v for k, v in facts.platform_headers().items() if k.startswith("X-Stainless-")}
    assert ours == _base_client.platform_headers(anthropic.__version__, platform=None)


def _theirs(cfg: ModelConfig) -> None:
    """The request the SDK's own `messages.stream` makes for `cfg`, built as ours was before it left the SDK out."""
    credential = {"api_key": cfg.api_key} if cfg.api_key else {"auth_token": cfg.auth_token}
    headers = {k: anthropic.Omit() if first_party.omitted(v) else v for k, v in first_party.auth_headers(cfg).items()}
    sdk = anthropic.Anthropic(**credential, base_url=cfg.base_url, timeout=cfg.timeout, max_retries=0,
                              default_headers=headers)  # type: ignore[arg-type]  # fmt: skip
    with sdk.messages.stream(**build_params(REQUEST)) as stream:
        stream.get_final_message()
    sdk.close()


def _both(server: MockServer, cfg: ModelConfig) -> tuple[dict[str, Any], dict[str, Any]]:
    """Our request for `cfg`, then the SDK's own, as the server saw them."""
    client = AnthropicClient(cfg)
    client.complete(REQUEST)
    client.close()
    _theirs(cfg)
    ours, theirs = server.requests
    return ours, theirs


@pytest.mark.parametrize("credential", ["api key", "auth token", "both"])
@pytest.mark.parametrize("custom", [None, "X-Team: blue\nx-app: theirs\nnot a header"])
def test_our_request_carries_the_sdk_s_headers_in_its_order(
    server: MockServer, monkeypatch: pytest.MonkeyPatch, credential: str, custom: str | None
) -> None:
    if custom is None:
        monkeypatch.delenv("ANTHROPIC_CUSTOM_HEADERS", raising=False)
    else:
        monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", custom)
    key = "sk-ant-key-0123456789" if credential != "auth token" else None
    token = "tok-0123456789" if credential != "api key" else None
    ours, theirs = _both(server, ModelConfig(api_key=key, auth_token=token, base_url=server.base_url, max_retries=0))
    assert list(ours["headers"].items()) == list(theirs["headers"].items())
    assert ours["body"] == theirs["body"] and ours["path"] == theirs["path"]
    if custom is not None:
        assert ours["headers"]["x-team"] == "blue" and ours["headers"]["x-app"] == "agentteams"


def test_an_sdk_whose_files_say_nothing_is_asked_instead(server: MockServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sdk_facts, "installed", lambda: None)
    ours, theirs = _both(server, ModelConfig(api_key="sk-ant-key-0123456789", base_url=server.base_url, max_retries=0))
    assert list(ours["headers"].items()) == list(theirs["headers"].items())


def test_an_unreadable_layout_gives_no_facts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "anthropic"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_version.py").write_text('__version__ = "9.9.9"\n')
    (package / "_constants.py").write_text("import httpx\nAPI = get_version()\n")  # not a plain assignment
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "anthropic")
    sdk_facts.installed.cache_clear()
    try:
        assert sdk_facts.installed() is None
        (package / "_constants.py").write_text('import httpx\nANTHROPIC_API_VERSION = "2099-01-01"\n')
        sdk_facts.installed.cache_clear()
        assert sdk_facts.installed() == sdk_facts.SdkFacts("9.9.9", "2099-01-01", "httpx")
    finally:
        monkeypatch.undo()
        sdk_facts.installed.cache_clear()


def test_a_refusal_is_worded_and_read_as_the_sdk_s(server: MockServer) -> None:
    refusing = MockServer({"routes": [{"name": "r", "turns": [{"error": {"status": 429, "type": "rate_limit_error",
                                                                         "message": "slow down"}}] * 2}]})  # fmt: skip
    with refusing:
        wire = first_party.FirstParty(ModelConfig(api_key="k", base_url=refusing.base_url))
        with pytest.raises(first_party.StatusError) as ours:
            wire.answer(build_params(REQUEST), None, Answer())
        wire.close()
        sdk = anthropic.Anthropic(api_key="k", base_url=refusing.base_url, max_retries=0)
        with pytest.raises(anthropic.APIStatusError) as theirs:
            sdk.messages.create(**{k: v for k, v in build_params(REQUEST).items() if k != "stream"})
        sdk.close()
    mine, expected = ours.value, theirs.value
    assert mine.request_id == "req_mock_000001" and expected.request_id == "req_mock_000002"  # one request each
    fields = ("status_code", "body", "type", "api_message")
    same_id = {**expected.body, "request_id": mine.request_id}  # type: ignore[dict-item]
    assert (str(mine), *(getattr(mine, f) for f in fields)) == (
        str(expected).replace("req_mock_000002", "req_mock_000001"), expected.status_code, same_id, expected.type,
        expected.api_message)  # fmt: skip


def test_a_call_to_anthropic_s_api_imports_neither_the_sdk_nor_its_http_library(server: MockServer) -> None:
    code = (
        "import sys\n"
        "from agentteams.model.anthropic_client import AnthropicClient\n"
        "from agentteams.model.config import ModelConfig\n"
        "from agentteams.model.types import ModelRequest\n"
        f"client = AnthropicClient(ModelConfig(api_key='k', base_url={server.base_url!r}))\n"
        "r = client.complete(ModelRequest('m', 's', [], [{'role': 'user', 'content': 'hi'}]))\n"
        "assert r.content == [{'type': 'text', 'text': 'ok'}], r.content\n"
        "assert 'anthropic' not in sys.modules, 'the SDK was imported'\n"
        "assert not {'httpx', 'httpx2'} & set(sys.modules), 'an HTTP library was imported'\n"
        "from agentteams.model import first_party\n"
        "assert first_party._SSL_CONTEXT is None, 'an http:// call loaded the CA store'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
