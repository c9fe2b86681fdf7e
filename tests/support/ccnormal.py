"""Normalising what the real Claude Code writes per session into stable golden text: ids, timestamps, hashes,
run paths and the CLI's own prompt text (never copied into the project) replaced by placeholders."""

from __future__ import annotations

import json
import re
from typing import Any

UUID_RE = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
TS_RE = re.compile(r"\b20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\b")
MOCK_RE = re.compile(r"MOCK[A-Z]+[^<\n]*")  # our scripted text inside the CLI's own (a compact summary): kept
BACKUP_RE = re.compile(r"\.backup\.\d{10,}")
STAMP = "2000-01-01T00:00:00.000Z"
HASH_RE = re.compile(r"\b[0-9a-f]{64}\b")
ELIDE_OVER = 160  # longer strings are the CLI's prompt text or environment dumps, not the conversation we scripted
KEEP_WHOLE = {"cwd", "workingDirectory", "filePath", "file_path", "argv", "new_or_grown_files"}  # paths, never elided
VOLATILE_NUMBERS = {"startTime", "totalDuration", "totalAPIDuration", "totalAPIDurationWithoutRetries",
                    "totalToolDuration", "durationMs", "toolInputStreamMs", "costUSD", "totalCostUSD",
                    "ttftMs", "sentAtMs"}  # fmt: skip


class Normaliser:
    """One mapping for a whole scenario, so that an id means the same entry in every file and request of it."""

    def __init__(self, run_root: str, stand_in: str, keep: tuple[str, ...] = ()) -> None:
        self.run_root, self.stand_in = run_root, stand_in
        self.uuids: dict[str, str] = {k: k for k in keep}  # ids chosen by the recording (--session-id) stay
        self.made = 0
        self.hashes: dict[str, str] = {}

    def uuid(self, real: str) -> str:
        if real not in self.uuids:
            self.made += 1
            self.uuids[real] = f"00000000-0000-4000-8000-{self.made:012d}"
        return self.uuids[real]

    def text(self, s: str) -> str:
        s = s.replace(self.run_root, self.stand_in)
        s = UUID_RE.sub(lambda m: self.uuid(m.group(0)), s)
        s = HASH_RE.sub(lambda m: self.hashes.setdefault(m.group(0), f"sha256-{len(self.hashes) + 1}"), s)
        s = BACKUP_RE.sub(".backup.<epoch-ms>", s)
        return TS_RE.sub(STAMP, s)  # one stamp: ranks would shift with every tie; the file order is the order

    def value(self, v: Any, key: str = "") -> Any:
        if isinstance(v, dict) and "input_schema" in v:  # a tool definition: the CLI's own text, its name kept
            return {k: self.value(x, k) if k == "name" else "<elided: tool definition>" for k, x in v.items()}
        if isinstance(v, dict):
            return {self.text(k): self.value(x, k) for k, x in v.items()}
        if isinstance(v, list):
            return [self.value(x, key) for x in v]
        if isinstance(v, str):
            if key not in KEEP_WHOLE and (len(v) > ELIDE_OVER or "<system-reminder>" in v):
                kept = "".join(f"; holds {m!r}" for m in MOCK_RE.findall(v))
                return f"<elided: {len(v)} chars of the CLI's own text{kept}>"
            return self.text(v)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and key in VOLATILE_NUMBERS:
            return 0
        return v

    def jsonl(self, raw: str) -> str:
        """A transcript's lines, each normalised and dumped compactly in the CLI's key order."""
        out = [json.dumps(self.value(json.loads(line)), ensure_ascii=False) for line in raw.splitlines() if line]
        return "".join(line + "\n" for line in out)
