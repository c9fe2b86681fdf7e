"""Error types. Every error a user can cause is an `AgentTeamsError` whose message is one clear line."""


class AgentTeamsError(Exception):
    """Base of every error the CLI turns into one line on stderr and a non-zero exit."""


class InvalidNameError(AgentTeamsError):
    """A team, agent or task name that is empty, too long, or would leave the config root."""


class NotFoundError(AgentTeamsError):
    """A team, member or task that does not exist."""


class ConflictError(AgentTeamsError):
    """An operation that would break an invariant: a dependency cycle, deleting a team with members."""


class CorruptFileError(AgentTeamsError):
    """A JSON file that cannot be parsed or has the wrong shape; the message says where it went."""


class LockTimeoutError(AgentTeamsError):
    """A lock that could not be taken before the deadline."""


class UnsafePathError(AgentTeamsError):
    """A symbolic link planted where a file or directory of ours under the config root belongs: never followed."""


class LockLostError(AgentTeamsError):
    """A lock another process broke while we held it (we were stopped past its staleness): nothing was written.

    The store's read-modify-writes catch it and redo the change on fresh data; `lock_dir` names the lock.
    """

    def __init__(self, message: str, lock_dir: str) -> None:
        super().__init__(message)
        self.lock_dir = lock_dir


class HookAnswerError(AgentTeamsError):
    """An SDK callback's hook answer Claude Code does not take (it named another event): the turn ends with it."""


class PromptBlocked(AgentTeamsError):
    """A UserPromptSubmit hook blocked the prompt (exit 2, a block, `continue: false`): the line saying why."""


class NotSentError(AgentTeamsError):
    """A message the store could not take (a full or read-only disk) and took back whole: sending it again later
    cannot deliver it twice."""
