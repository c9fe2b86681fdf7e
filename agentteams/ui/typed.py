"""What the REPL makes of a typed line beyond its text: the files it mentions (`@path`), read and attached before it,
and `!command`, run in the shell (no model request for it unless `respondToBashCommands` leaves it on, as Claude Code
2.1.332's default does), its output going into the conversation as claude puts it."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from agentteams.ui.render import Renderer

if TYPE_CHECKING:
    from agentteams.agent.session import Session
    from agentteams.agent.session_options import TurnExtras
    from agentteams.agent.typed_input import ShellRun
    from agentteams.team.lead.runtime import LeadRuntime

OUTPUT_LINES = 10  # of a command's output shown under it (all of it goes into the conversation)


def is_shell(line: str) -> bool:
    """A line typed in bash mode: `!` first, a command after it."""
    return line.startswith("!") and bool(line[1:].strip())


class Typed:
    """The person's input as the lead is to get it: mentions read, commands run, their output held for the next
    prompt when the model is not to answer it."""

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer
        self._held: list[dict[str, Any]] = []  # a !command's output for the next prompt (the model did not answer)
        self._lock = threading.Lock()
        self._running: threading.Event | None = None  # a command's own interrupt while it runs

    def extras(self, text: str, session: Session, given: TurnExtras | None = None) -> TurnExtras | None:
        """What goes before `text` (what a custom command already gives, kept): held output, the files it
        mentions (each shown as read)."""
        import dataclasses

        from agentteams.agent.session_options import TurnExtras
        from agentteams.agent.typed_input import mention_blocks, session_mentions

        mentions = session_mentions(text, session)  # a deny rule on Read keeps a mentioned file out of the request
        for m in mentions:
            self.renderer.hint(f"  ⎿  Read {m.typed} ({m.lines} line{'' if m.lines == 1 else 's'})")
        with self._lock:
            held, self._held = self._held, []
        attach = (*held, *mention_blocks(mentions))
        if not attach:
            return given
        base = given or TurnExtras()
        return dataclasses.replace(base, attach=(*base.attach, *attach))

    def shell(self, line: str, runtime: LeadRuntime, *, echo: bool) -> None:
        """Run `!command` on a thread of its own (Esc stops it); its output is shown, then sent for an answer or
        held for the next prompt. `echo`: the line is not on the screen yet (not typed at the prompt)."""
        from agentteams.agent.typed_input import own_context

        command = line[1:].strip()
        if echo:
            self.renderer.notice(f"! {command}", style="bold")
        ctx = own_context(runtime.session.ctx)
        self._running = ctx.interrupt
        threading.Thread(target=self._run, args=(command, ctx, runtime), name="bash-mode", daemon=True).start()

    def _run(self, command: str, ctx: Any, runtime: LeadRuntime) -> None:
        from agentteams.agent.session_options import TurnExtras
        from agentteams.agent.typed_input import run_shell, shell_blocks

        try:
            run = run_shell(command, ctx)
        except Exception as e:  # a bug must not pass silently: the person waits for the output
            self.renderer.warning("error", f"could not run the command: {type(e).__name__}: {e}")
            return
        finally:
            if self._running is ctx.interrupt:
                self._running = None
        self._show(run)
        if run.interrupted:
            return
        if runtime.session.options.settings.merged.get("respondToBashCommands", True) is not False:
            runtime.submit("", TurnExtras(attach=tuple(shell_blocks(run, "asked"))))
        else:
            with self._lock:
                self._held += shell_blocks(run, "context")

    def _show(self, run: ShellRun) -> None:
        lines = run.output.rstrip("\n").splitlines() or ["(no output)"]
        if len(lines) > OUTPUT_LINES:
            lines = [*lines[:OUTPUT_LINES], f"… +{len(lines) - OUTPUT_LINES} lines"]
        self.renderer.notice("  ⎿  " + "\n     ".join(lines), style="red" if run.failed else "")
        self.renderer.on_change()

    def stop(self) -> bool:
        """Esc: stop the command running, if one is; whether there was one."""
        running = self._running
        if running is None:
            return False
        running.set()
        return True
