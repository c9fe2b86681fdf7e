"""What a person types beside the prompt itself, as Claude Code 2.1.332 puts it into the request: an `@path` read with
the Read tool, before the prompt's text; a `!command` run in the shell, its input and output in the conversation as
`<bash-input>`, `<bash-stdout>`, `<bash-stderr>` (claude's transcripts' tags, so each CLI shows the other's)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from agentteams.agent.session_options import TurnExtras
from agentteams.tools.base import ToolContext

Block = dict[str, Any]
# `@path` at the start of the text or after white space; a quoted path may hold spaces: @"my notes.txt"
MENTION = re.compile(r'(?:^|(?<=\s))@(?:"([^"\n]+)"|([^\s"]+))')
TRAILING = ".,;:!?)]}'"  # a sentence's punctuation after a mention is not part of its path
CAVEAT = "local-command-caveat"
NOT_ASKED = (
    f"<{CAVEAT}>The person ran the command below themselves, in their shell; it is not a request to you, and they "
    f"have seen its output. It is here as context for what comes next.</{CAVEAT}>\n"
)


@dataclass(frozen=True)
class Mention:
    """One file a prompt mentions: as typed, where it is, its length in lines and what the Read tool gave."""

    typed: str
    path: Path
    lines: int
    text: str


def mentioned(text: str, cwd: Path) -> list[tuple[str, Path]]:
    """The existing files `text` mentions with `@`, each once, in order: (as typed, its absolute path)."""
    found: dict[Path, str] = {}
    for match in MENTION.finditer(text):
        typed = match.group(1) or match.group(2).rstrip(TRAILING)
        path = Path(typed).expanduser()
        path = path if path.is_absolute() else cwd / path
        if typed and path.is_file() and path not in found:
            found[path] = typed
    return [(typed, path) for path, typed in found.items()]


def read_mentions(text: str, ctx: ToolContext, allowed: Any = None) -> list[Mention]:
    """The files `text` mentions, read through the Read tool (so a later Write or Edit of one needs no Read first);
    `allowed(path)` False (a deny rule for Read) leaves a file out, as does one the tool could not read."""
    from agentteams.tools.files.read_write_edit import ReadTool

    read = ReadTool()
    out = []
    for typed, path in mentioned(text, ctx.cwd):
        if allowed is not None and not allowed(path):
            continue
        result = read.run({"file_path": str(path)}, ctx)
        if not result.is_error:
            data = result.data if isinstance(result.data, dict) else {}
            out.append(Mention(typed, path, int(data.get("total_lines") or 0), result.content))
    return out


def session_mentions(text: str, session: Any) -> list[Mention]:
    """The files `text` mentions that `session` (an agent Session) may read, read now; a deny rule on Read keeps one
    out of the request."""

    def allowed(path: Path) -> bool:
        return bool(session.policy.decide("Read", "read", str(path)).behavior != "deny")

    return read_mentions(text, session.ctx, allowed) if "@" in text else []


def with_mentions(prompt: str, extras: TurnExtras | None, session: Any) -> tuple[str, TurnExtras | None]:
    """A -p prompt and its turn extras with the files it mentions before it, as the REPL attaches them (claude 2.1.332
    expands `@path` in -p as well)."""
    mentions = session_mentions(prompt, session)
    if not mentions:
        return prompt, extras
    base = extras or TurnExtras()
    return prompt, replace(base, attach=(*base.attach, *mention_blocks(mentions)))


def mention_blocks(mentions: list[Mention]) -> list[Block]:
    """Each mentioned file as the model is given it, before the prompt: the Read call made and its result."""
    blocks = []
    for m in mentions:
        call = json.dumps({"file_path": str(m.path)})
        blocks.append({"type": "text", "text": f"<system-reminder>\nThe person mentioned @{m.typed}, so the Read "
                                               f"tool was called with {call}. It returned:\n{m.text}\n"
                                               f"</system-reminder>"})  # fmt: skip
    return blocks


@dataclass(frozen=True)
class ShellRun:
    """A `!command` once run: what it printed (stdout and stderr joined, as the Bash tool reads them) and whether it
    failed (a non-zero exit, a timeout, an interruption)."""

    command: str
    output: str
    failed: bool
    interrupted: bool = False


def run_shell(command: str, ctx: ToolContext) -> ShellRun:
    """`command` run by the Bash tool's machinery in the session's working directory (its environment without the
    model's credentials, its own process group, the tool's timeout); `ctx.interrupt` stops it."""
    from agentteams.tools.shell.bash import BashTool

    result = BashTool().run({"command": command}, ctx)
    data = result.data if isinstance(result.data, dict) else {}
    output = result.content if result.content != "(no output)" else ""
    return ShellRun(command, output, result.is_error, bool(data.get("interrupted")))


def own_context(ctx: ToolContext) -> ToolContext:
    """The session's context with an interrupt of its own: a command typed between turns is stopped by its own Esc,
    and a turn starting meanwhile (which clears the session's) does not let it run on unstoppable."""
    import threading

    return replace(ctx, interrupt=threading.Event())


def shell_blocks(run: ShellRun, mode: Literal["asked", "context"]) -> list[Block]:
    """The command and its output as claude puts them into the conversation: a turn of their own the model answers
    (`asked`), or context for the next prompt (`context`, with a note that nothing was asked)."""
    out, err = ("", run.output) if run.failed else (run.output.rstrip("\n"), "")
    end = "\n" if mode == "context" else ""
    blocks: list[Block] = [{"type": "text", "text": NOT_ASKED}] if mode == "context" else []
    blocks.append({"type": "text", "text": f"<bash-input>{run.command}</bash-input>\n"})
    blocks.append({"type": "text", "text": f"<bash-stdout>{out}</bash-stdout><bash-stderr>{err}</bash-stderr>{end}"})
    return blocks
