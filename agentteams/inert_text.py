"""Text from models, files and peers made inert for a terminal: its control characters shown, never obeyed (an OSC 52
in a task subject must not reach the clipboard, nor a title sequence in a message the pane's title). Stdlib only."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, and the C1 controls (0x9b is a one-byte CSI to many terminals)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _shown(found: re.Match[str]) -> str:
    code = ord(found.group())
    if code < 0x20:
        return "^" + chr(code + 0x40)  # caret notation, as `cat -v`: ESC is ^[, BEL ^G, CR ^M
    return "^?" if code == 0x7F else f"<U+{code:04X}>"


def inert(text: str) -> str:
    """`text` with every control character but tab and newline replaced by a visible stand-in."""
    return _CONTROLS.sub(_shown, text) if _CONTROLS.search(text) else text
