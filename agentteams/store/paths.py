"""The config root and every on-disk path and name rule shared with Claude Code.

The only module that reads the environment for locations. No name can address a path outside the root, nor reach
a directory of ours through a planted link (`fs.safe_paths` opens the files themselves without following one).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from agentteams.errors import InvalidNameError
from agentteams.store.fs.safe_paths import check_dirs

LEAD_NAME = "team-lead"
MAX_NAME_LEN = 128
_TEAM_DIR_RE = re.compile(r"[^A-Za-z0-9]")
SLUG_MAX = 200  # a project directory name longer than this is cut and told apart by a hash, as Claude Code does


def project_slug(cwd: str) -> str:
    """Claude Code's project directory name for a cwd: every non-alphanumeric character `-`; past 200 characters
    cut to 200 and suffixed `-<base36 of |the cwd's 32-bit string hash|>` (JavaScript's hash over UTF-16 units:
    learnt from the real CLI's directories, tests/golden-2.1.330/transcripts/long_cwd)."""
    slug = _TEAM_DIR_RE.sub("-", cwd)
    if len(slug) <= SLUG_MAX:
        return slug
    data, h = cwd.encode("utf-16-le"), 0
    for i in range(0, len(data), 2):
        h = (h * 31 + int.from_bytes(data[i : i + 2], "little")) & 0xFFFFFFFF
    h = abs(h - (1 << 32) if h >= 1 << 31 else h)
    digits = ""
    while h:
        h, r = divmod(h, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
    return f"{slug[:SLUG_MAX]}-{digits or '0'}"


_PATH_PART_RE = re.compile(r"[^A-Za-z0-9_-]")
_TASK_ID_RE = re.compile(r"^[0-9]+$")


def config_root() -> Path:
    """`$CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env) if env else Path.home() / ".claude"


def refuse_control(raw: str, kind: str) -> str:
    """`raw`, unless it holds a control character or NUL (refused: such a name would be stored raw, and could
    address the same file as a plain one)."""
    bad = next((c for c in raw if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0), None)
    if bad is not None:
        raise InvalidNameError(f"{kind} name {raw!r} contains the control character U+{ord(bad):04X}")
    return raw


def _checked(raw: str, kind: str, sanitized: str) -> str:
    refuse_control(raw, kind)
    if not raw or not raw.strip():
        raise InvalidNameError(f"{kind} name is empty")
    if len(raw) > MAX_NAME_LEN:
        raise InvalidNameError(f"{kind} name is longer than {MAX_NAME_LEN} characters: {raw[:40]!r}...")
    if not any(c.isascii() and c.isalnum() for c in sanitized):
        raise InvalidNameError(f"{kind} name {raw!r} needs at least one ASCII letter or digit (A-Z, a-z, 0-9)")
    return sanitized


def team_dir_name(team: str) -> str:
    """Team directory rule: every non-alphanumeric character becomes `-`, then lowercase."""
    return _checked(team, "team", _TEAM_DIR_RE.sub("-", team).lower())


def path_part(name: str, kind: str = "agent") -> str:
    """Inbox-file and task-dir rule: `[^A-Za-z0-9_-]` becomes `-`, case kept."""
    return _checked(name, kind, _PATH_PART_RE.sub("-", name))


def agent_name(name: str) -> str:
    """An agent's name as stored: `@` (the id separator) becomes `-`; control characters are refused."""
    cleaned = refuse_control(name, "agent").strip().replace("@", "-")
    path_part(cleaned)  # refuses names that could not have an inbox
    return cleaned


def agent_id(name: str, team: str) -> str:
    return f"{name}@{team}"


def inbox_key(name: str) -> str:
    """What a member name addresses on disk: its inbox file's name, case-folded (`a/b`, `A-b` and `a-b` share one)."""
    return _PATH_PART_RE.sub("-", name.strip().replace("@", "-")).lower()


def unique_name(wanted: str, taken: list[str]) -> str:
    """`wanted`, or `wanted-2`, `wanted-3`, ...: the first whose inbox no name in `taken` addresses."""
    keys = {inbox_key(t) for t in taken}
    if inbox_key(wanted) not in keys:
        return wanted
    n = 2
    while inbox_key(f"{wanted}-{n}") in keys:
        n += 1
    return f"{wanted}-{n}"


def task_id_part(task_id: str) -> str:
    if not _TASK_ID_RE.match(task_id):
        raise InvalidNameError(f"task id must be a positive whole number, got {task_id!r}")
    return str(int(task_id))


class Layout:
    """Path builders below one config root; every result is checked to stay inside it."""

    __slots__ = ("root",)

    def __init__(self, root: Path) -> None:
        self.root = root

    def __repr__(self) -> str:
        return f"Layout({str(self.root)!r})"

    @classmethod
    def from_env(cls) -> Layout:
        return cls(config_root())

    def _inside(self, path: Path, *, directory: bool = False) -> Path:
        """`path`, checked to stay inside the root and to reach no directory of ours through a symbolic link
        (`directory`: `path` is one itself; the final component of a file is checked when it is opened)."""
        root = os.path.normpath(os.path.abspath(self.root))
        full = os.path.normpath(os.path.abspath(path))
        if os.path.commonpath([root, full]) != root or full == root:
            raise InvalidNameError(f"path {path} would leave the config root {self.root}")
        check_dirs(root, full if directory else os.path.dirname(full))
        return Path(full)

    @property
    def teams_dir(self) -> Path:
        return self.root / "teams"

    @property
    def tasks_root(self) -> Path:
        return self.root / "tasks"

    def _team(self, team: str, *rest: str) -> Path:
        # one join and one check per path: each builder walks its directories once (a send builds several)
        return self._inside(Path(self.root, "teams", team_dir_name(team), *rest), directory=not rest)

    def team_dir(self, team: str) -> Path:
        return self._team(team)

    def config_file(self, team: str) -> Path:
        return self._team(team, "config.json")

    def inbox_dir(self, team: str) -> Path:
        return self._inside(Path(self.root, "teams", team_dir_name(team), "inboxes"), directory=True)

    def inbox_file(self, team: str, agent: str) -> Path:
        return self._team(team, "inboxes", f"{path_part(agent_name(agent))}.json")

    def history_file(self, team: str, agent: str) -> Path:
        """Append-only archive of delivered messages moved out of the live inbox (ours, not the CLI's)."""
        return self._team(team, "inboxes", f"{path_part(agent_name(agent))}.history.jsonl")

    def presence_file(self, team: str, agent: str) -> Path:
        """`teams/<team>/agents/<agent>.json`: where one of our agents runs and what it is doing (ours)."""
        return self._team(team, "agents", f"{path_part(agent_name(agent))}.json")

    def task_dir(self, team: str) -> Path:
        return self._inside(self.tasks_root / path_part(team, "team"), directory=True)

    def task_file(self, team: str, task_id: str) -> Path:
        return self._inside(Path(self.root, "tasks", path_part(team, "team"), f"{task_id_part(task_id)}.json"))

    @property
    def projects_dir(self) -> Path:
        return self.root / "projects"

    def transcript_file(self, cwd: Path | str, session_id: str) -> Path:
        """`projects/<project_slug(cwd)>/<session-id>.jsonl`, as Claude Code."""
        return self._inside(self.projects_dir / project_slug(str(cwd)) / f"{path_part(session_id, 'session')}.jsonl")

    def plan_file(self, session_id: str) -> Path:
        """Where a session in plan mode writes its plan: the one file plan mode lets it edit."""
        # not checked for links here: a session starts whatever is there; plan mode refuses a linked plan file
        return self.root / "plans" / f"{path_part(session_id, 'session')}.md"

    def task_lock_target(self, team: str) -> Path:
        return self.task_dir(team) / ".lock"

    def highwatermark_file(self, team: str) -> Path:
        return self.task_dir(team) / ".highwatermark"

    def fork_seed_file(self, team: str, agent: str) -> Path:
        """Where a forked teammate's start (its lead's conversation, system prompt and tools) waits for it: ours."""
        return self._inside(Path(self.root, "agentteams", "forks", path_part(team, "team"),
                                 f"{path_part(agent_name(agent))}.json"))  # fmt: skip

    def board_copy_file(self, team: str) -> Path:
        """Our copy of a team's task board for views (store/file/board_cache.py): ours alone, outside the task dir
        Claude Code shares."""
        return self._inside(Path(self.root, "agentteams", "boards", f"{path_part(team, 'team')}.json"))
