"""`apiKeyHelper`: the settings command that prints an API key, run when the environment holds none.

The key lives only in the returned mapping (for the model client): never in os.environ, argv, files or messages.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from agentteams.errors import AgentTeamsError
from agentteams.store.redis.connection import STORE_SECRET_VARS

HELPER_TIMEOUT = 30.0  # seconds; a helper may ask a secrets manager over the network
KEY_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
# the other model credentials that are only that (AWS access keys and Google's credential file serve the user's own
# tools too: a command may need them, so they stay)
MODEL_ONLY_CREDENTIALS = ("AWS_BEARER_TOKEN_BEDROCK", "ANTHROPIC_FOUNDRY_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
# never in the environment of anything an agent runs: the Bash tool, hooks, MCP servers, key helpers
SECRET_VARS = (*KEY_VARS, *MODEL_ONLY_CREDENTIALS, *STORE_SECRET_VARS)


def without_secrets(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without any credential: what a command the agent runs is given."""
    return {k: v for k, v in env.items() if k not in SECRET_VARS}


class KeyHelperError(AgentTeamsError):
    """The apiKeyHelper command failed, timed out or printed nothing."""


def run_key_helper(command: str, cwd: Path, timeout: float = HELPER_TIMEOUT) -> str:
    """Run `command` with /bin/sh, as Claude Code does; its stdout, stripped, is the key."""
    import subprocess  # only a session with an apiKeyHelper runs one

    env = without_secrets(os.environ)
    try:
        proc = subprocess.run(
            ["/bin/sh", "-c", command], capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd,
            env=env, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except subprocess.TimeoutExpired as e:
        raise KeyHelperError(f"apiKeyHelper did not finish within {timeout:g}s") from e
    except OSError as e:
        raise KeyHelperError(f"apiKeyHelper could not be started: {e.strerror or e}") from None
    key = proc.stdout.strip()
    if proc.returncode != 0:
        # stderr's last line helps; it is scrubbed of whatever stdout held, in case that was a key after all
        tail = (proc.stderr.strip().splitlines() or [""])[-1][:200]
        if key:
            tail = tail.replace(key, "***")
        raise KeyHelperError(f"apiKeyHelper exited with status {proc.returncode}" + (f": {tail}" if tail else ""))
    if not key:
        raise KeyHelperError("apiKeyHelper printed no key")
    return key


def credentials_env(helper: str | None, cwd: Path, environ: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """The environment to build the model client from: as it is when it holds a key or there is no helper,
    else a copy with the helper's key as ANTHROPIC_API_KEY (a copy: tools and teammates never inherit it)."""
    env = os.environ if environ is None else environ
    if helper is None or any(env.get(k, "").strip() for k in KEY_VARS):
        return env
    return {**env, "ANTHROPIC_API_KEY": run_key_helper(helper, cwd)}
