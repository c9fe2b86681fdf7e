"""The scripted provider's side of WebSearch: two search results, and the answer to a search request (its
server_tool_use call, the web_search_tool_result holding the results, a summary)."""

from __future__ import annotations

from typing import Any

RESULTS = [
    {"type": "web_search_result", "url": "https://docs.python.org/3/", "title": "Python 3 docs",
     "encrypted_content": "ENC1", "page_age": None},
    {"type": "web_search_result", "url": "https://docs.python.org/3/tutorial/", "title": "The tutorial",
     "encrypted_content": "ENC2", "page_age": "2 days ago"},
]  # fmt: skip


def search_turn(query: str) -> dict[str, Any]:
    """What the provider answers a search request with: its search call, the results, a summary."""
    return {"content": [
        {"type": "text", "text": "Searching."},
        {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": query}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": RESULTS},
        {"type": "text", "text": "SUMMARY-MARK the docs live at docs.python.org."},
    ]}  # fmt: skip
