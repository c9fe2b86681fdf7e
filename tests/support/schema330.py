"""Claude Code 2.1.330's inbox element rule, written from REPORT-2.1.330 §3.2 alone (no production code): the tests'
independent judge of every element we write or keep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REQUIRED_STRINGS = ("from", "text", "timestamp")
OPTIONAL_STRINGS = ("type", "color", "summary", "from_plugin")  # present: a string; null is not accepted


def element_faults(element: Any) -> list[str]:
    """Why 2.1.330 would drop this inbox element (empty when it keeps it)."""
    if type(element) is not dict:
        return ["not an object"]
    faults = [f"{k} is not a string" for k in REQUIRED_STRINGS if type(element.get(k)) is not str]
    faults += [f"{k} is not a string" for k in OPTIONAL_STRINGS if k in element and type(element[k]) is not str]
    if "read" in element and type(element["read"]) is not bool:
        faults.append("read is not a boolean")
    return faults


def inbox_faults(path: Path) -> list[str]:
    """Every fault 2.1.330 would find in this inbox file, `[index] why`; a top level that is no array is one."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if type(data) is not list:
        return ["top level is not an array"]
    return [f"[{i}] {fault}" for i, e in enumerate(data) for fault in element_faults(e)]
