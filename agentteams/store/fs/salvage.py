"""The good elements of a JSON array that does not parse as a whole: a torn or mangled element costs only its own
bytes, kept exactly, never its neighbours (an inbox's unread messages beside it)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# Claude Code writes arrays with JSON.stringify(x, null, 2): an element starts a line indented by exactly two
# spaces, and nothing nested does (it is indented further; strings hold no raw newline). An array in another
# layout is cut before any `{` that follows a comma, and each cut is tried until an element parses from it.
_PRETTY_CUT = re.compile(r",[ \t\r]*\n  (?=[^ \t\r\n])")
_LOOSE_CUT = re.compile(r",\s*(?=\{)")
_WS = " \t\n\r"
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class BadElement:
    """An element that is not JSON: its position in the array as written, its exact bytes, and why."""

    index: int
    raw: bytes
    reason: str


@dataclass
class Salvaged:
    elements: list[tuple[int, Any]]  # (position in the array as written, element)
    bad: list[BadElement]


def salvage_array(raw: bytes) -> Salvaged | None:
    """Every element of the array in `raw` that parses, and the exact bytes of each one that does not; None when
    `raw` does not begin as an array at all."""
    text = raw.decode("utf-8", "surrogateescape")  # every byte kept: a span encodes back to exactly what was read
    pos = _skip(text, 0)
    if pos >= len(text) or text[pos] != "[":
        return None
    cut = _PRETTY_CUT if "\n  " in text else _LOOSE_CUT
    out = Salvaged([], [])
    pos, index = pos + 1, 0
    while True:
        pos = _skip(text, pos)
        if pos >= len(text) or text[pos] == "]":
            _trailing(text, pos + 1, index, out)
            return out
        start = pos
        element, end, why = _element(text, pos)
        if why is None:
            out.elements.append((index, element))
            pos = _skip(text, end)
            if text[pos] == "]":
                _trailing(text, pos + 1, index + 1, out)
                return out
            pos += 1  # past the comma
        else:
            stop, pos = _next_cut(text, pos, cut)
            out.bad.append(BadElement(index, _bytes(text[start:stop].rstrip(_WS)), why))
        index += 1


def _element(text: str, pos: int) -> tuple[Any, int, str | None]:
    """(element, where it ends, None) when a whole element followed by `,` or `]` starts at `pos`; else
    (None, pos, why not)."""
    try:
        element, end = _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError as e:
        return None, pos, f"not valid JSON ({e.msg})"
    after = _skip(text, end)
    if after >= len(text) or text[after] not in ",]":
        return None, pos, "not valid JSON (no ',' or ']' after it)"
    span = text[pos:end]
    if any("\udc80" <= c <= "\udcff" for c in span):  # bytes that were not UTF-8, or an encoded lone surrogate
        try:
            element = json.loads(_bytes(span).decode("utf-8", "surrogatepass"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None, pos, "not valid UTF-8"
    return element, end, None


def _next_cut(text: str, pos: int, cut: re.Pattern[str]) -> tuple[int, int]:
    """(where the bad element at `pos` ends, where the next element starts): the next cut from which an element
    parses, else the array's closing bracket, else the end of the text (a torn file)."""
    for m in cut.finditer(text, pos + 1):
        if _element(text, m.end())[2] is None:
            return m.start(), m.end()
    closing = text.rstrip(_WS)
    if closing.endswith("]") and len(closing) - 1 > pos:
        return len(closing) - 1, len(closing) - 1
    return len(text), len(text)


def _trailing(text: str, pos: int, index: int, out: Salvaged) -> None:
    """Anything after the closing bracket is one more bad element."""
    rest = text[pos:].strip(_WS)
    if rest:
        out.bad.append(BadElement(index, _bytes(rest), "not valid JSON (text after the array's end)"))


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def _bytes(span: str) -> bytes:
    return span.encode("utf-8", "surrogateescape")
