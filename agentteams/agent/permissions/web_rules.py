"""Web permission rules as Claude Code writes them: `WebFetch(domain:example.com)` names one host,
`WebFetch(domain:*.example.com)` its subdomains; the target of a web call is the host it would reach."""

from __future__ import annotations

PREFIX = "domain:"


def domain_covered(pattern: str, host: str, *, deny: bool = False) -> bool:
    """Whether a rule's pattern names this host (case and a trailing dot do not matter; a deny rule reads the
    same way: a host has one spelling here)."""
    if not pattern.startswith(PREFIX):
        return False
    want = pattern[len(PREFIX) :].strip().lower().rstrip(".")
    host = host.strip().lower().rstrip(".")
    if want.startswith("*."):
        return host.endswith(want[1:]) and len(host) > len(want) - 1
    return bool(want) and host == want


def domain_rule_pattern(host: str) -> str:
    """The pattern an "allow always" answer keeps for a web call: its host."""
    return f"{PREFIX}{host.lower()}"
