"""Team configs in Redis: one JSON value per team (`at:{team}:config`), changed by compare-and-set (WATCH, MULTI/EXEC,
redone when another writer got in between) with its member events (store/member_events.py) in the same transaction. The
membership rules (joins, departures, returns, the lead claim) are every store's, inherited from `Membership`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from agentteams.errors import ConflictError, CorruptFileError, NotFoundError
from agentteams.pids import LeadProcess
from agentteams.store.member_events import member_events
from agentteams.store.membership import Membership, new_config
from agentteams.store.paths import LEAD_NAME, team_dir_name
from agentteams.store.records import TeamConfig
from agentteams.store.redis.connection import TEAMS_KEY, Client, Keys

T = TypeVar("T")
EVENTS_KEPT = 1000  # the event stream's length, as the task scripts trim it
MAX_CAS_TRIES = 1000  # a compare-and-set lost this often means a writer loops: say so rather than spin


# compare-and-set of a config in one round trip: the new value (and its member events) only over the value read
_CAS = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
for i = 4, #ARGV, 3 do
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'op', 'member', 'kind', ARGV[i], 'agent', ARGV[i + 1],
             'value', ARGV[i + 2])
end
return 1
"""


class RedisTeams(Membership):
    """`TeamStore`'s member logic over configs held in Redis; every change goes through `update`."""

    def __init__(self, client: Client, where: str) -> None:
        self.client = client
        self.where = where  # the store URL, for messages ("team x in redis://h:6379/0")
        self._cas = client.register_script(_CAS)

    def location(self, team: str) -> str:
        return f"{self.where} key {Keys(self.canonical(team)).config}"

    def exists(self, team: str) -> bool:
        return bool(self.client.exists(Keys(self.canonical(team)).config))

    def present(self, team: str) -> bool:
        keys = Keys(self.canonical(team))
        return bool(self.client.exists(keys.config, keys.task_seq, keys.inboxes))

    def create(
        self, team: str, *, description: str | None = None, lead_session_id: str = "",
        lead_model: str | None = None, lead_agent_type: str = LEAD_NAME, cwd: str | None = None,
        lead_pane_id: str = "", lead_backend_type: str | None = None, lead_process: LeadProcess | None = None,
    ) -> TeamConfig:  # fmt: skip
        """Create a team; a name already taken gets `-2`, `-3`, ... (claimed by SET NX of the config)."""
        base = team_dir_name(team)
        n = 1
        while True:
            name = base if n == 1 else f"{base}-{n}"
            config = new_config(name, description, lead_session_id, lead_model, lead_agent_type, cwd, lead_pane_id,
                                lead_backend_type, lead_process)  # fmt: skip
            # listed first: a crash between the two leaves a listed name without a config (skipped by list_teams),
            # never a team that `team list` cannot see; a taken name is listed already, by its team
            self.client.sadd(TEAMS_KEY, name)
            if self.client.set(Keys(name).config, json.dumps(config.to_json()), nx=True):
                return config
            n += 1

    def read(self, team: str) -> TeamConfig:
        keys = Keys(self.canonical(team))
        return self.parse(team, keys, self.client.get(keys.config))

    def peek(self, team: str) -> TeamConfig:
        return self.read(team)  # a round trip either way: a fresh parse costs little beside it

    def parse(self, team: str, keys: Keys, raw: Any) -> TeamConfig:
        if raw is None:
            raise NotFoundError(f"no team named {team!r} (no {keys.config} in {self.where})")
        try:
            return TeamConfig.from_json(json.loads(raw), keys.config)
        except ValueError as e:  # CorruptFileError is one too
            hint = "it was left as it is: fix it, or delete the team with --force"
            raise CorruptFileError(f"{keys.config}: {e}; {hint}") from e

    def list_teams(self) -> list[TeamConfig | CorruptFileError]:
        out: list[TeamConfig | CorruptFileError] = []
        for name in sorted(self.client.smembers(TEAMS_KEY)):
            try:
                out.append(self.read(name))
            except CorruptFileError as e:
                out.append(e)
            except NotFoundError:
                continue  # deleted between the listing and the read
        return out

    def update(self, team: str, change: Callable[[TeamConfig], T], *, write_if: Callable[[T], bool] | None = None) -> T:
        """Apply `change` to the config and write it back unless `write_if` says no, as one compare-and-set (a
        script: the write only over the value read, with its member events): redone on fresh data when another
        writer changed the config meanwhile."""
        keys = Keys(self.canonical(team))
        for _ in range(MAX_CAS_TRIES):
            raw = self.client.get(keys.config)
            config = self.parse(team, keys, raw)
            result = change(config)
            if write_if is not None and not write_if(result):
                return result
            events = member_events(self.parse(team, keys, raw), config)
            fields = [f for e in events for f in (e.kind, e.agent, e.value)]
            args = [raw, json.dumps(config.to_json()), EVENTS_KEPT, *fields]
            if self._cas(keys=[keys.config, keys.events], args=args):
                return result
        raise ConflictError(f"team {team!r}: its config kept changing under {MAX_CAS_TRIES} tries to update it")

    def delete(self, team: str, *, force: bool = False) -> list[str]:
        """Remove every key of the team; refuses while teammates remain (worktrees stay: they are on the machines
        that made them)."""
        name = self.canonical(team)
        if not self.present(name):
            raise NotFoundError(f"no team named {team!r} in {self.where}")
        self.refuse_delete(name, force)  # members left, or a config that does not read: only with force
        keys = list(self.client.scan_iter(match=_glob_escape(Keys(name).prefix) + "*", count=500))
        if keys:
            self.client.delete(*keys)
        self.client.srem(TEAMS_KEY, name)
        return []


def _glob_escape(text: str) -> str:
    """A key prefix as a literal SCAN pattern (the hash tag's braces are literal; `*?[\\` are not)."""
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in text)
