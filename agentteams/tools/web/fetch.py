"""WebFetch, as Claude Code's: fetch a URL with httpx (http upgraded to https, at most 10 MB, a time limit),
follow redirects on the same host only (another host's is reported to the model), turn HTML into markdown with
markdownify, then have the small model answer the prompt over the page (the page itself when no model is lent)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urljoin, urlsplit, urlunsplit

from agentteams import __version__
from agentteams.errors import AgentTeamsError
from agentteams.model.aliases import resolve_model
from agentteams.model.types import ModelRequest
from agentteams.tools.base import Tool, ToolContext, ToolInputError, ToolResult, require_str

if TYPE_CHECKING:
    import httpx

MAX_BODY_BYTES = 10 * 1024 * 1024  # a larger response is refused, as Claude Code's
MAX_MARKDOWN_CHARS = 100_000  # what the small model is given of a page
TIMEOUT_S = 60.0  # the whole fetch, connecting to the last byte
MAX_REDIRECTS = 10
SMALL_MODEL = "haiku"
USER_AGENT = f"agentteams/{__version__} (WebFetch)"


class FetchError(Exception):
    """The page could not be fetched: one line for the model."""


@dataclass(frozen=True)
class Page:
    url: str
    status: int
    reason: str
    content_type: str
    body: bytes


@dataclass(frozen=True)
class Redirect:
    original: str
    location: str
    status: int
    reason: str


def parse_url(raw: str) -> str:
    """An absolute http(s) URL, http upgraded to https (ToolInputError otherwise)."""
    try:
        parts = urlsplit(raw.strip())
        _ = parts.port  # a bad port raises here
    except ValueError as exc:
        raise ToolInputError(f"Invalid URL: {raw!r}") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname or " " in raw.strip():
        raise ToolInputError(f"Invalid URL: {raw!r} (an absolute http or https URL is needed)")
    return urlunsplit(parts._replace(scheme="https"))


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def same_site(a: str, b: str) -> bool:
    """A redirect Claude Code follows by itself: the same host, give or take `www.`."""
    return host_of(a).removeprefix("www.") == host_of(b).removeprefix("www.")


def _read_body(response: httpx.Response, deadline: float) -> bytes:
    import httpx  # imported when a page is first fetched: it is not on the start-up path

    declared = response.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise FetchError(f"The response is {int(declared)} bytes, over the {MAX_BODY_BYTES}-byte (10 MB) limit")
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise FetchError(f"The response is over the {MAX_BODY_BYTES}-byte (10 MB) limit; it was not read")
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("the whole fetch took too long")
        chunks.append(chunk)
    return b"".join(chunks)


def fetch(url: str) -> Page | Redirect:
    """GET `url`, following same-site redirects; a redirect elsewhere is returned, not followed."""
    import httpx  # see _read_body

    deadline = time.monotonic() + TIMEOUT_S
    timeout = httpx.Timeout(TIMEOUT_S)
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False, headers={"user-agent": USER_AGENT}) as client:
            for _ in range(MAX_REDIRECTS + 1):
                with client.stream("GET", url) as response:
                    location = response.headers.get("location")
                    if response.is_redirect and location:
                        target = urljoin(url, location)
                        if not same_site(url, target):
                            return Redirect(url, target, response.status_code, response.reason_phrase)
                        url = target
                        continue
                    body = _read_body(response, deadline)
                    kind = response.headers.get("content-type", "")
                    return Page(url, response.status_code, response.reason_phrase, kind, body)
    except httpx.TimeoutException as exc:
        raise FetchError(f"Timed out after {TIMEOUT_S:g} s fetching {url}") from exc
    except httpx.HTTPError as exc:
        raise FetchError(f"Could not fetch {url}: {exc}") from exc
    raise FetchError(f"Too many redirects (more than {MAX_REDIRECTS}) from {url}")


def to_markdown(page: Page) -> str:
    """HTML as markdown (scripts and styles dropped); any other text as it is."""
    text = page.body.decode(_charset(page.content_type), errors="replace")
    if "html" not in page.content_type.lower() and not text.lstrip()[:15].lower().startswith(("<!doctype", "<html")):
        return text
    from bs4 import BeautifulSoup  # markdownify's own parser; imported when a page is first fetched
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(text, "html.parser")
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    return str(MarkdownConverter().convert_soup(soup)).strip()


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            return value.strip('"')
    return "utf-8"


def redirect_text(redirect: Redirect, prompt: str) -> str:
    return (
        f"Redirected to another host (HTTP {redirect.status} {redirect.reason}); it was not followed.\n\n"
        f"Original URL: {redirect.original}\nRedirect URL: {redirect.location}\n\n"
        f'To read it, call WebFetch again with url "{redirect.location}" and prompt "{prompt}".'
    )


def small_model_request(markdown: str, prompt: str) -> ModelRequest:
    """What the small model is asked: the prompt over the page, briefly, and quoting little."""
    page = markdown if len(markdown) <= MAX_MARKDOWN_CHARS else markdown[:MAX_MARKDOWN_CHARS] + "\n[... page cut ...]"
    ask = (
        f"Here is a web page, converted to markdown:\n---\n{page}\n---\n\n{prompt}\n\n"
        "Answer from this page only, concisely. Quote at most a short sentence at a time, in quotation marks; "
        "say everything else in your own words."
    )
    return ModelRequest(resolve_model(SMALL_MODEL), "", [], [{"role": "user", "content": ask}], max_tokens=4096,
                        agent="WebFetch")  # fmt: skip


class WebFetchTool(Tool):
    name = "WebFetch"
    description = (
        "Fetch a web page and answer `prompt` about it: the page is converted to markdown and read by a small, "
        "fast model. http is upgraded to https; a redirect to another host is reported back (call again with "
        "that URL); pages over 10 MB are refused. For private or authenticated pages use another tool."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "format": "uri", "description": "The URL to fetch"},
            "prompt": {"type": "string", "description": "What to find out from the page"},
        },
        "required": ["url", "prompt"],
        "additionalProperties": False,
    }
    kind = "web"

    def permission_target(self, args: dict[str, Any], cwd: Any = None) -> str | None:
        """The host: `WebFetch(domain:example.com)` rules match it."""
        try:
            return host_of(parse_url(args["url"])) if isinstance(args.get("url"), str) else None
        except ToolInputError:
            return None

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        url, prompt = parse_url(require_str(args, "url")), require_str(args, "prompt")
        started = time.monotonic()
        try:
            got = fetch(url)
        except FetchError as exc:
            return ToolResult.error(str(exc))
        if isinstance(got, Redirect):
            return ToolResult(redirect_text(got, prompt), data={"redirect": got.location, "code": got.status})
        data = {"url": got.url, "code": got.status, "bytes": len(got.body), "ms": 0}
        if got.status >= 400:
            return ToolResult(f"The server answered HTTP {got.status} {got.reason}; the page was not read.", data=data)
        markdown = to_markdown(got)
        answer = markdown if ctx.hooks.ask_model is None else self._ask(ctx, markdown, prompt)
        data["ms"] = int((time.monotonic() - started) * 1000)
        return ToolResult(answer or "(the page is empty)", data=data)

    def _ask(self, ctx: ToolContext, markdown: str, prompt: str) -> str:
        assert ctx.hooks.ask_model is not None
        try:
            response = ctx.hooks.ask_model(small_model_request(markdown, prompt))
        except AgentTeamsError as exc:  # the small model failed: the model still gets the page
            return f"(The small model could not read the page: {exc}. The page itself follows.)\n\n{markdown}"
        return "".join(b.get("text", "") for b in response.content if b.get("type") == "text").strip()
