"""Base URLs of the model's endpoints: checked as http(s)://host[:port], shown without what may carry credentials."""

from __future__ import annotations

from urllib.parse import urlsplit

from agentteams.errors import AgentTeamsError


class BadBaseURLError(AgentTeamsError):
    """ANTHROPIC_BASE_URL is not an http(s) URL."""


def display_url(url: str) -> str:
    """A URL fit for a message: user info, query and fragment removed (they may carry credentials)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "<unparseable URL>"
    if not parts.scheme or not parts.hostname:
        return url.split("?", maxsplit=1)[0].split("#", maxsplit=1)[0].rsplit("@", 1)[-1]
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    if port is not None:
        host = f"{host}:{port}"
    return f"{parts.scheme}://{host}{parts.path}"


def check_base_url(url: str, name: str = "ANTHROPIC_BASE_URL") -> str:
    """Return `url` without a trailing slash, or raise `BadBaseURLError` (naming the variable `name`) when it is not
    http(s)://host[:port]."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError on a port that is not a number in range
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        valid = False
    if not valid:
        raise BadBaseURLError(
            f"{name} {display_url(url)!r} is not a valid http(s) URL (expected e.g. https://api.anthropic.com)"
        )
    return url.rstrip("/")
