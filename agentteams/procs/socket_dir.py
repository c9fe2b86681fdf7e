"""The private directory that holds our per-user sockets (fork servers, the warm `-p` server): 0700 and checked.

Cheap stdlib imports only: launchers call it before anything else is imported.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from agentteams.errors import AgentTeamsError
from agentteams.pids import pid_alive

SUN_PATH_MAX = 107  # bytes in an AF_UNIX path, without the terminating NUL
LONGEST_NAME = "fs-4194304.sock"  # Linux's largest pid


class ForkServerError(AgentTeamsError):
    """A fork server that cannot be started: an unsafe socket directory, a path too long."""


def private_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_RUNTIME_DIR/agentteams` or `/tmp/agentteams-<uid>`, created 0700 and checked to be ours alone."""
    env = os.environ if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR", "")
    candidates = [Path(runtime) / "agentteams"] if runtime and os.path.isdir(runtime) else []
    candidates.append(Path(f"/tmp/agentteams-{os.getuid()}"))
    for path in candidates:
        if len(os.fsencode(path / LONGEST_NAME)) <= SUN_PATH_MAX:
            return ensure_private(path)
    raise ForkServerError(f"no socket directory short enough for AF_UNIX ({SUN_PATH_MAX} bytes): {candidates[0]}")


def ensure_private(path: Path) -> Path:
    """Create `path` mode 0700, or check an existing one is a real directory owned by us with no group/other bits."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        found = f"{stat.filemode(st.st_mode)} owner {st.st_uid}"
        raise ForkServerError(f"refusing socket directory {path}: {found}; need a directory of ours, mode 0700")
    return path


def sweep_dead(directory: Path) -> list[Path]:
    """Remove the sockets `fs-<pid>.sock` left by fork servers (and early teammates) that died without cleaning up:
    their process is gone. A live process's socket, or any other file, is left. The removed paths."""
    removed = []
    for path in directory.glob("fs-*.sock"):
        digits = path.name[3:-5]
        if not digits.isdigit() or not path.is_socket():
            continue
        if pid_alive(int(digits)):
            continue  # alive (another user's reused pid, say): not ours to judge
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed
