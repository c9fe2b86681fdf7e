"""The consoles commands print through (`status`, `watch`, `logs`); the REPL's is `ui.render.make_console`.

Importing this module imports rich (~25 ms): commands import it only once they have something to show.
"""

from __future__ import annotations

from rich.console import Console, Group, RenderableType

__all__ = ["Console", "Group", "RenderableType", "command_console"]  # rich's types, for the commands' hints


def command_console(*, soft_wrap: bool = False) -> Console:
    """A console on stdout: styled on a terminal, plain when piped; our text is never auto-highlighted."""
    return Console(force_terminal=None, highlight=False, soft_wrap=soft_wrap)
