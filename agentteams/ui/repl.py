"""The interactive lead's input loop: prompt_toolkit on a terminal (history, multi-line, output above the
input line), plain line reading otherwise; Ctrl-C interrupts, Ctrl-D leaves, the next line answers a question.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agentteams.errors import AgentTeamsError, NotFoundError
from agentteams.inert_text import inert
from agentteams.ui.lead_start import Deferred, Lead
from agentteams.ui.questions import Questions
from agentteams.ui.render import Renderer
from agentteams.ui.team_view import TeamView, teammate_count
from agentteams.ui.terminal import LoopWriter
from agentteams.ui.typed import Typed, is_shell

if TYPE_CHECKING:  # the lead's modules load with the lead, which a deferred start composes behind the prompt
    from prompt_toolkit import PromptSession
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import FormattedText

    from agentteams.agent.session import TurnExtras
    from agentteams.team.lead.runtime import LeadRuntime
    from agentteams.ui.commands import CommandContext

IDLE_HINT = "Press Ctrl-D or type /exit to leave."
MODE_SHOWN = {"default": "default mode", "acceptEdits": "⏵⏵ accept edits on", "plan": "⏸ plan mode on",
              "bypassPermissions": "⏵⏵ bypass permissions on", "dontAsk": "don't ask mode",
              "delegate": "delegate mode"}  # fmt: skip
QUEUED = "⧗ queued: sent at the next tool result (or as the next prompt)"
POLL = 0.05  # seconds between checks while plain mode waits for the lead to finish


class Repl:
    """Reads prompts and answers until the person leaves; then stops the lead (and, if asked, its team)."""

    def __init__(
        self, lead: Lead | Deferred, renderer: Renderer, questions: Questions, view: TeamView, *, history: Path,
        terminal: bool, banner: str = "", writer: LoopWriter | None = None, name: str | None = None,
    ) -> None:  # fmt: skip
        self.renderer = renderer
        self.name = name  # -n: shown at the prompt's right and in the terminal's title, as claude shows it
        self.questions = questions
        self.view = view
        self.history = history
        self.terminal = terminal
        self.banner = banner
        self.writer = writer  # on a terminal, the console's stream: drained by the prompt's loop
        self.closed = False
        self.typed = Typed(renderer)  # @path mentions and !commands
        self.lead: Lead | None = None
        self._deferred = lead if isinstance(lead, Deferred) else None
        self._mode_cycles = 0  # Shift-Tabs pressed before the lead was there: applied once it is
        if not isinstance(lead, Deferred):
            self._attach(lead)

    def _attach(self, lead: Lead) -> None:
        from agentteams.ui.commands import CommandContext

        self.lead = lead
        self.runtime: LeadRuntime = lead.runtime
        self.commands: CommandContext = CommandContext(self.runtime, self.view, self.renderer)
        cycles, self._mode_cycles = self._mode_cycles, 0
        for _ in range(cycles):
            self.cycle_mode()

    def run(self, first: str | None) -> int:
        """The whole session; the exit code (0: the person left)."""
        if self._deferred is not None and (first or not self.terminal):
            raise ValueError("a deferred lead is for a terminal session whose first prompt the person types")
        return self._terminal_loop(first) if self.terminal else self._plain_loop(first)

    def built(self) -> Lead | None:
        """The lead once composed (a deferred one still being composed is waited for); None if it never was."""
        if self.lead is None and self._deferred is not None:
            return self._deferred.result()
        return self.lead

    def _compose(self, app: Application[str]) -> None:
        """The prompt is on screen: a deferred lead starts being composed (once)."""
        if self._deferred is not None:
            self._deferred.start(lambda: self._composed(app))

    def _composed(self, app: Application[str]) -> None:
        """On the prompt's loop: the lead is there (the toolbar shows its state), or its failure ends the prompt."""
        assert self._deferred is not None
        error = self._deferred.failure()
        if error is not None:
            if app.is_running:
                app.exit(exception=error)
            return
        lead = self._deferred.result()
        if lead is not None and self.lead is None:
            self._attach(lead)
            app.invalidate()

    async def _ready(self) -> None:
        """Until the deferred lead is composed (its failure is raised here): what the person entered meanwhile waits."""
        if self.lead is None and self._deferred is not None:
            self._attach(await self._deferred.wait())

    # -- shared -------------------------------------------------------------------------------------

    def _submit(self, text: str, *, echo: bool) -> None:
        if echo:
            self.renderer.user_prompt(text)
        extras = self.typed.extras(text, self.runtime.session)
        if self.runtime.busy and extras is None:  # steered: in at the turn's next tool result, else the next turn
            self.renderer.hint(QUEUED)
        self.runtime.submit(text, extras)

    def _handle(self, line: str, *, echo: bool) -> bool:
        """One entered line; True when the person asked to leave."""
        if self.questions.current() is not None:
            if not self.questions.answer(line):
                question = self.questions.current()
                self.renderer.hint(f"Answer {question.prompt.strip() if question else 'the question'}")
            return False
        if not line.strip():
            return False
        if is_shell(line):  # bash mode: the command runs here, not as a prompt
            self.typed.shell(line, self.runtime, echo=echo)
            return False

        def submit(text: str, extras: TurnExtras | None) -> None:  # a custom command's prompt: echoed as typed
            if echo:
                self.renderer.user_prompt(line)
            self.runtime.submit(text, self.typed.extras(text, self.runtime.session, extras))

        self.commands.submit = submit
        from agentteams.ui.commands import run_command

        outcome = run_command(line.strip(), self.commands)
        if outcome == "submit":
            self._submit(line, echo=echo)
        return outcome == "leave"

    def _ctrl_c(self) -> None:
        if self.questions.cancel_all():
            self.runtime.interrupt()
            self.renderer.hint("Denied; stopping the turn.")
        elif self.runtime.busy:
            self.runtime.interrupt()
        else:
            self.renderer.hint(IDLE_HINT)

    def _escape(self) -> bool:
        """Esc: deny a waiting question and stop the turn, or stop the turn or a running !command; False when there
        was nothing to stop (a second Esc then clears the line or offers to rewind)."""
        if self.lead is None:
            return False
        if self.questions.cancel_all():
            self.runtime.interrupt()
            self.renderer.hint("Denied; stopping the turn.")
            return True
        stopped = self.typed.stop()
        if self.runtime.busy:
            self.runtime.interrupt()
            return True
        return stopped

    def _close(self, team_down: bool) -> int:
        """Stop the lead (and with `team_down` its team); the exit code."""
        lead = self.lead
        assert lead is not None, "the prompt loop waits for the lead before anything can close it"
        self.questions.close()
        if self.runtime.busy:
            self.runtime.interrupt()
        team = self.runtime.team
        members = self.runtime.members() if team else []
        if team_down and members:
            self.renderer.notice(f"Shutting down the team ({teammate_count(len(members))})…", style="dim")
        self.closed = True
        error: Exception | None = None
        try:
            lead.close(team_down=team_down)
        except KeyboardInterrupt:  # impatient: leave the rest to the next run (a team left behind stays valid)
            lead.close(team_down=False, timeout=0)
            team_down = False
        except (AgentTeamsError, OSError) as e:
            error = e
        code = 0
        if team_down and team and (error is not None or self.runtime.teams.present(team)):
            code = 0 if self._delete_again(team, error) else 1
        if not team_down and members:
            self.renderer.hint(f"The team {team} keeps running without its lead.")
        session = self.runtime.session
        if session.agent.messages:  # as Claude Code on leaving: how to come back to this conversation
            self.renderer.hint(f"Resume this session with: agentteams --resume {session.options.session_id}")
        self.renderer.flush()
        return code

    def _delete_again(self, team: str, error: Exception | None) -> bool:
        """Delete what is left of the team now that every thread of the lead has stopped; False (and a line) if
        that fails too. A teammate's last write can land in the team dir while the first delete runs."""
        try:
            self.runtime.teams.delete(team, force=True)
        except NotFoundError:
            return True
        except (AgentTeamsError, OSError) as again:
            first = f" (first try: {error})" if error else ""
            self.renderer.warning("error", f"could not delete team {team}: {again}{first}")
            return False
        return True

    # -- a terminal: prompt_toolkit -----------------------------------------------------------------

    def _terminal_loop(self, first: str | None) -> int:
        import asyncio

        # one event loop for the whole session: patch_stdout hands background output to the running prompt's
        # loop, and a loop closed between two prompts (as sync prompt() does) would drop what was in flight
        return asyncio.run(self._terminal_session(first))

    async def _terminal_session(self, first: str | None) -> int:
        import asyncio

        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.patch_stdout import patch_stdout

        from agentteams.store.fs import safe_paths

        # private (what the person typed), and made here so FileHistory, which follows links, never meets one
        safe_paths.make_dir(self.history.parent, parents=True)
        if not safe_paths.create_new(self.history, b"") and self.history.is_symlink():
            raise safe_paths.refused(self.history)
        from agentteams.ui.keys import KEY_WAIT, KeyActions, bindings, path_completer

        session: PromptSession[str] = PromptSession(
            history=FileHistory(str(self.history)), multiline=True,
            key_bindings=bindings(KeyActions(self.cycle_mode, self._escape)), completer=path_completer(Path.cwd()),
            complete_while_typing=True, prompt_continuation=lambda width, _n, _soft: " " * min(width, 2),
            bottom_toolbar=self._toolbar, refresh_interval=0.5, rprompt=self._name_shown,
        )  # fmt: skip
        if self.name:
            from prompt_toolkit.shortcuts import set_title

            set_title(f"✳ {inert(self.name)}")
        session.app.ttimeoutlen = session.app.timeoutlen = KEY_WAIT  # Esc acts at once, not a second later
        self.renderer.on_change = session.app.invalidate
        session.app.after_render += self._compose  # a deferred lead is composed once the prompt is on screen
        # written straight away, before any prompt is up: a prompt drawn on the terminal's top row is pushed
        # into the scrollback, not erased, by the first output written above it
        if self.banner:
            self.renderer.hint(self.banner)
        if self.lead is not None and self.runtime.session.options.resume is not None:  # -c, -r: where it left off
            from agentteams.ui.resumed import show

            show(self.renderer, self.runtime.session)
        if first:
            session.history.append_string(first)
            self._submit(first, echo=True)
        serving = asyncio.create_task(self.writer.serve()) if self.writer else None
        await asyncio.sleep(0)  # the writer takes over before anything can draw a prompt
        with patch_stdout(raw=True):  # for stray prints; our own output goes through the writer
            try:
                return await self._prompt_loop(session)
            finally:
                if self.writer and serving:
                    self.writer.stop()
                    await serving

    async def _prompt_loop(self, session: PromptSession[str]) -> int:
        from agentteams.ui.keys import REWIND

        default = ""
        while True:
            line: str | None = None
            try:
                line = await session.prompt_async(self._message, default=default)
                default = ""
                if line == REWIND:
                    await self._ready()
                    default = await self._rewind()
                    continue
            except KeyboardInterrupt:
                session.app.erase_when_done = False  # only the prompt Ctrl-C ended is erased
                await self._ready()
                self._ctrl_c()
                continue
            except EOFError:
                pass
            await self._ready()  # a line entered while the lead was being composed waits for it
            leave = True if line is None else self._handle(line, echo=False)
            if leave:
                team_down = await self._confirm_leave()
                if team_down is not None:  # shutting down takes seconds: the loop keeps printing meanwhile
                    return await asyncio.get_running_loop().run_in_executor(None, self._close, team_down)

    async def _rewind(self) -> str:
        """Esc Esc at an empty prompt: pick a prompt of this session to go back to before; its text to edit."""
        from agentteams.agent.rewind import points
        from agentteams.ui.rewind_picker import choose, go_back

        point = await choose(points(self.runtime.session), self.renderer)
        return go_back(point, self.runtime, self.renderer) if point is not None else ""

    def _message(self) -> FormattedText:
        from prompt_toolkit.formatted_text import FormattedText

        parts: list[tuple[str, str]] = []
        if self.renderer.partial:  # the answer's unfinished line: shown here until it ends, then printed above
            parts.append(("", self.renderer.partial + "\n"))
        question = self.questions.current()
        parts.append(("bold ansiyellow", question.prompt) if question else ("bold", "> "))
        return FormattedText(parts)

    def _name_shown(self) -> FormattedText:
        from prompt_toolkit.formatted_text import FormattedText

        return FormattedText([("ansibrightblack", inert(self.name))] if self.name else [])

    def _toolbar(self) -> str:
        if self.questions.current() is not None:
            return " a question is waiting: answer it at the prompt (Ctrl-C denies)"
        if self.lead is None:  # still being composed: no team nor turn yet, the mode it is given
            mode = self._deferred.mode if self._deferred else "default"
            return f" /help for commands · Ctrl-D to leave · {MODE_SHOWN.get(mode, mode)} (shift+tab to cycle)"
        team = self.runtime.team
        about = f" · team {team}: {teammate_count(len(self.runtime.members()))}" if team else ""
        about += f" · {MODE_SHOWN.get(self.runtime.session.policy.mode, self.runtime.session.policy.mode)}"
        about += " (shift+tab to cycle)"
        if self.runtime.busy:
            return f" ✻ working… (esc to interrupt){about}"
        return f" /help for commands · Ctrl-D to leave{about}"

    def cycle_mode(self) -> None:
        """Shift-Tab: the next permission mode, as Claude Code cycles them (the toolbar shows it)."""
        from agentteams.agent.permissions import live_changes

        if self.lead is None:  # pressed before the lead was there: applied once it is
            self._mode_cycles += 1
            return
        session = self.runtime.session
        following = session.switch_mode(live_changes.next_mode(session.policy, session.options.permission_mode))
        self.renderer.hint(f"Permission mode: {MODE_SHOWN.get(following, following)}")

    async def _confirm_leave(self) -> bool | None:
        """Whether to shut the team down on leaving (True when there is none); None: the person stayed."""
        from prompt_toolkit import PromptSession

        self.questions.close()  # nobody will answer from now on: pending asks are denied
        members = self.runtime.members() if self.runtime.team else []
        if not members:
            return True
        text = f"Shut down the team ({teammate_count(len(members))}) before leaving? [Y/n] "
        confirm: PromptSession[str] = PromptSession()  # no history: a yes or no is not worth recalling
        while True:
            try:
                answer = (await confirm.prompt_async(text)).strip().lower()
            except KeyboardInterrupt:
                self.questions.reopen()
                return None
            except EOFError:
                return True
            if answer in ("", "y", "yes", "n", "no"):
                return answer in ("", "y", "yes")

    # -- not a terminal: plain lines ----------------------------------------------------------------

    def _plain_loop(self, first: str | None) -> int:
        """Lines from stdin, each once the lead has settled (or a question waits), so piped input keeps order."""
        if first:
            self._submit(first, echo=True)
        while True:
            try:
                self._wait_for_turn_to_read()
                line = sys.stdin.readline()
                if not line:
                    break
                if self._handle(line.rstrip("\n"), echo=True):
                    break
            except KeyboardInterrupt:
                self._ctrl_c()
        self.questions.close()
        try:
            self._wait_for_turn_to_read()  # what was asked gets finished before leaving
        except KeyboardInterrupt:
            self.runtime.interrupt()
        return self._close(team_down=True)

    def _wait_for_turn_to_read(self) -> None:
        while self.questions.current() is None and not self.runtime.settled():
            self.runtime.wait_idle(timeout=POLL)
