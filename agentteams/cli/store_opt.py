"""The global `--store URL` option, given before the command (`agentteams --store redis://host:6379/0 status`):
this command and every process it starts use that store, as with AGENTTEAMS_STORE. `--store file` forces the file
store. A URL holding a password is refused in one line: argv is readable by every user of the machine."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from agentteams.errors import AgentTeamsError

OPTION = "--store"
# the commands that do not work on the Redis store: a resumed lead reads the file store's layout; refused, not run on
# the wrong store (`attach` names a member's node or finds its pane, `logs` reads what a node shipped through the store)
NOT_ON_REDIS = ("resume",)
RESUME_FLAGS = ("-c", "--continue", "-r", "--resume")  # the lead's; a relaunched teammate (--agent-id) may resume


def apply(argv: list[str]) -> None:
    """Take a leading `--store URL` (or `--store=URL`) out of `argv` (sys.argv: argv[0] is the program) and set
    AGENTTEAMS_STORE from it; a bad URL exits with one line."""
    from agentteams.store.redis import connection

    connection.read_settings_env_with(_settings_env)  # a password or user may be in the settings' `env`
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


def _settings_env() -> Mapping[str, str]:
    from agentteams.settings.load import load_settings

    return load_settings(Path.cwd()).env


def set_store(url: str) -> None:
    """Use the store at `url` (a redis:// URL or "file") in this process and what it starts; a bad one: one line."""
    _set(url.strip())


def _set(url: str) -> None:
    from agentteams.store.opener import ENV_STORE

    if not url:
        raise AgentTeamsError("--store needs a URL: --store redis://host:port/db (or --store file)")
    if url == "file":
        os.environ[ENV_STORE] = "file"  # over one in the environment, for this command and what it starts
        return
    from agentteams.store.redis.connection import parse_url

    parse_url(url)  # refuses a password, or what is no redis:// URL, before anything runs
    os.environ[ENV_STORE] = url


def check_command(argv: list[str]) -> None:
    """Exit with one line when the Redis store is chosen for a command that does not work on it."""
    from agentteams.store.opener import ENV_STORE

    if os.environ.get(ENV_STORE, "").strip() in ("", "file") or not (what := refused(argv[1:])):
        return
    print(f"agentteams: error: {what} does not work on the Redis store yet; unset {ENV_STORE} or pass --store file",
          file=sys.stderr)  # fmt: skip
    sys.exit(1)


def refused(words: list[str]) -> str | None:
    """What of this command line the Redis store cannot serve, as the person would name it; None: it runs."""
    if words and words[0] in NOT_ON_REDIS:
        return f"`agentteams {words[0]}`"
    teammate = any(w == "--agent-id" or w.startswith("--agent-id=") for w in words)
    resume = next((w for w in words if w in RESUME_FLAGS or w.startswith("--resume=")), None)
    return f"resuming a lead ({resume.split('=')[0]})" if resume and not teammate else None
