"""The global `--store URL` option, given before the command (`agentteams --store redis://host:6379/0 status`):
this command and every process it starts use that store, as with AGENTTEAMS_STORE. `--store file` forces the file
store. A URL holding a password is refused in one line: argv is readable by every user of the machine."""

from __future__ import annotations

import os
import sys

from agentteams.errors import AgentTeamsError

OPTION = "--store"
# the commands that work on the Redis store today; agents (lead and teammates), watch, attach, logs, cleanup and
# resume still read the file store's layout, and are refused rather than run against the wrong store
REDIS_READY = ("team", "task", "msg", "status", "node", "--help", "-h", "--version", "-v")


def apply(argv: list[str]) -> None:
    """Take a leading `--store URL` (or `--store=URL`) out of `argv` (sys.argv: argv[0] is the program) and set
    AGENTTEAMS_STORE from it; a bad URL exits with one line."""
    words = argv[1:]
    if not words or not (words[0] == OPTION or words[0].startswith(OPTION + "=")):
        return
    if words[0] == OPTION:
        url, taken = (words[1] if len(words) > 1 else ""), 2
    else:
        url, taken = words[0].split("=", 1)[1], 1
    try:
        _set(url.strip())
    except AgentTeamsError as e:
        print(f"agentteams: error: {e}", file=sys.stderr)
        sys.exit(1)
    del argv[1 : 1 + taken]


def set_store(url: str) -> None:
    """Use the store at `url` (a redis:// URL or "file") in this process and what it starts; a bad one: one line."""
    _set(url.strip())


def _set(url: str) -> None:
    from agentteams.store.files import ENV_STORE

    if not url:
        raise AgentTeamsError("--store needs a URL: --store redis://host:port/db (or --store file)")
    if url == "file":
        os.environ[ENV_STORE] = "file"  # over one in the environment, for this command and what it starts
        return
    from agentteams.store.redis_conn import parse_url

    parse_url(url)  # refuses a password, or what is no redis:// URL, before anything runs
    os.environ[ENV_STORE] = url


def check_command(argv: list[str]) -> None:
    """Exit with one line when the Redis store is chosen for a command that does not work on it yet."""
    from agentteams.store.files import ENV_STORE

    if os.environ.get(ENV_STORE, "").strip() in ("", "file") or (len(argv) > 1 and argv[1] in REDIS_READY):
        return
    what = f"`agentteams {argv[1]}`" if len(argv) > 1 and not argv[1].startswith("-") else "running agents"
    print(
        f"agentteams: error: {what} does not work on the Redis store yet (team, task, msg and status do); "
        f"unset {ENV_STORE} or pass --store file",
        file=sys.stderr,
    )
    sys.exit(1)
