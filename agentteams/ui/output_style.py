"""/output-style, as Claude Code 2.1.332 has it: with no argument, the style in use and every style there is; with a
name (any case), that style from the next request on, saved as `outputStyle` in the project's local settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentteams.agent.session import Session


def output_style_lines(session: Session, args: str) -> list[str]:
    """What the command says; the session's style changed when a known name other than the one in use is given."""
    from agentteams.errors import AgentTeamsError
    from agentteams.settings.output_styles import DEFAULT, load_styles, named, write_choice

    styles = load_styles(session.options.cwd, session.layout.root)
    current = session.output_style.name if session.output_style is not None else DEFAULT
    wanted = args.strip()
    if not wanted:
        lines = [f"Output style in use: {current}", "", "Styles:"]
        for name, description in [(DEFAULT, ""), *((s.name, s.description) for s in styles.values())]:
            mark = " (in use)" if name == current else ""
            lines.append(f"- {name}{mark}" + (f": {description}" if description else ""))
        return [*lines, "", "Switch with /output-style <style>"]
    style = None if wanted.lower() == DEFAULT else named(wanted, styles)
    if style is None and wanted.lower() != DEFAULT:
        known = ", ".join([DEFAULT, *styles])
        return [f'There is no output style "{wanted}". The styles: {known}']
    name = style.name if style is not None else DEFAULT
    if name == current:
        return [f"The output style is {name} already"]
    try:
        write_choice(session.options.cwd, name)
    except AgentTeamsError as e:  # the session still switches; the file says why it was not saved
        session.set_output_style(style)
        return [f"Output style now {name}, for this session only: {e}"]
    session.set_output_style(style)
    return [f"Output style now {name}"]
