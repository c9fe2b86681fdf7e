"""`agentteams demo`: an offline team at work in a new tmux session, driven by the project's scripted server.

No key and no network: the lead, three teammates and the scripted API all run locally; `--finish` cleans up.
"""

import os
import secrets
import shlex
import shutil
import socket
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from agentteams.backends.tmux import TmuxBackend, TmuxError, inside_tmux, program
from agentteams.errors import AgentTeamsError
from agentteams.settings.trust import SANDBOXED_VAR

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
SESSION = "agentteams-demo"
OFFLINE_KEY = "agentteams-demo-offline-key"  # not a secret: the scripted server accepts any key
MARKER = ".agentteams-demo"


def _tmux() -> TmuxBackend:
    """AGENTTEAMS_TMUX_SOCKET's server, else the one we run in, else the default one."""
    return TmuxBackend()


def _run(*args: str, check: bool = True) -> None:
    try:
        _tmux().run(*args)
    except TmuxError:
        if check:
            raise


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _executable() -> str:
    own = Path(sys.executable).with_name("agentteams")
    return str(own) if own.is_file() else f"{shlex.quote(sys.executable)} -m agentteams"


def _finish(scratch: Path) -> None:
    """Remove the scratch project (only one the demo made) and close the demo session."""
    if (scratch / MARKER).is_file() and scratch.name.startswith("agentteams-demo-"):
        shutil.rmtree(scratch, ignore_errors=True)
    _run("kill-session", "-t", f"={SESSION}", check=False)


def _start(speed: float) -> Path:
    import json

    from agentteams.run.demo.reaper import linger_seconds
    from agentteams.run.demo.script import PROMPT, files, scenario

    linger = linger_seconds()  # a bad value is refused before anything starts

    if program() is None:
        raise AgentTeamsError("the demo runs in tmux, which is not installed (e.g. apt install tmux)")
    if _tmux().has_session(SESSION):
        raise AgentTeamsError(
            f"a demo is already running: tmux attach -t {SESSION} (or end it: tmux kill-session -t {SESSION})"
        )
    scratch = Path(tempfile.mkdtemp(prefix="agentteams-demo-"))
    for name, text in files().items():
        (scratch / name).write_text(text, encoding="utf-8")
    (scratch / MARKER).write_text("made by agentteams demo; removed when it ends\n", encoding="utf-8")
    script = Path(tempfile.mkdtemp(prefix="agentteams-demo-script-")) / "script.json"
    team = f"demo-{secrets.token_hex(2)}"
    script.write_text(json.dumps(scenario(team, speed)), encoding="utf-8")
    port, exe = _free_port(), _executable()
    api = f"{exe} mock-api --script {shlex.quote(str(script))} --port {port}"
    _run("new-session", "-d", "-s", SESSION, "-n", "scripted-api", "-x", "220", "-y", "50", "-c", str(scratch), api)
    # the scratch project is the demo's own (made just now, removed at the end): trusted as a sandbox, no question
    env = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": OFFLINE_KEY,
           "CLAUDE_CONFIG_DIR": os.environ.get("CLAUDE_CONFIG_DIR", ""), SANDBOXED_VAR: "1"}  # fmt: skip
    for key, value in env.items():
        if value:
            _run("set-environment", "-t", f"={SESSION}", key, value)
    places = f"--scratch {shlex.quote(str(scratch))} --script-dir {shlex.quote(str(script.parent))}"
    # beside the lead, in its window (it goes with the session): ends the demo once it is over and unwatched
    reaper = f"{exe} demo --reap {team} --linger {linger:g} {places} </dev/null >/dev/null 2>&1 &"
    lead = (
        f"{reaper} {exe} {shlex.quote(PROMPT)} --dangerously-skip-permissions --teammate-mode tmux; "
        f"rm -rf {shlex.quote(str(script.parent))}; {exe} demo --finish {shlex.quote(str(scratch))}"
    )
    _run("new-window", "-t", f"={SESSION}:", "-n", "lead", "-c", str(scratch), lead)
    return scratch


def _reap(team: str, linger: float, scratch: Path, script_dir: Path) -> None:
    """The lead window's companion: ends the demo once its scenario is over and nobody is attached."""
    from agentteams.run.demo.reaper import Reaper
    from agentteams.store.opener import open_store

    def hang_up() -> None:
        if script_dir.name.startswith("agentteams-demo-script-"):  # only the directory `_start` made
            shutil.rmtree(script_dir, ignore_errors=True)
        _finish(scratch)

    from agentteams.run.demo.script import DONE_MARK

    Reaper(_tmux(), open_store().teams, SESSION, team, linger, done_mark=DONE_MARK).run(hang_up)  # its lead's store


def _attach() -> None:
    target = f"={SESSION}:lead"
    command = _tmux().client_argv("switch-client" if inside_tmux() else "attach-session", "-t", target)
    os.execvp(command[0], command)


@app.command()
def demo(
    attach: Annotated[bool, typer.Option("--attach", help="Attach to the demo's tmux session at once.")] = False,
    speed: Annotated[float, typer.Option("--speed", min=0.0, help="Pace: 1 is watchable, 0 flat out.")] = 1.0,
    finish: Annotated[Path | None, typer.Option("--finish", hidden=True)] = None,
    reap: Annotated[str | None, typer.Option("--reap", hidden=True)] = None,
    linger: Annotated[float, typer.Option("--linger", hidden=True)] = 60.0,
    scratch: Annotated[Path | None, typer.Option("--scratch", hidden=True)] = None,
    script_dir: Annotated[Path | None, typer.Option("--script-dir", hidden=True)] = None,
) -> None:
    """Watch a team of three at work, offline: a lead, two developers and a tester in a new tmux session.

    No API key or network needed: a scripted model drives real tools in a scratch project. Unwatched (no tmux client
    attached), it ends itself a minute after the scenario (AGENTTEAMS_DEMO_LINGER seconds); attached, at Ctrl-D.
    """
    if finish is not None:
        _finish(finish)
        return
    if reap is not None and scratch is not None and script_dir is not None:
        _reap(reap, linger, scratch, script_dir)
        return
    scratch = _start(speed)
    typer.echo(f"The demo team is starting in tmux session {SESSION} (scratch project: {scratch}).")
    typer.echo(f"  watch it:      tmux attach -t {SESSION}   (inside tmux: tmux switch-client -t {SESSION})")
    typer.echo("  team status:   agentteams status   |   live dashboard: agentteams watch")
    typer.echo("It takes about a minute. Press Ctrl-D in the lead pane to leave: everything is cleaned up.")
    typer.echo("Nobody attached? It ends by itself a little after the scenario is over.")
    if attach and not (sys.stdin.isatty() and sys.stdout.isatty()):
        typer.echo(f"(not attaching: this is not a terminal; run `tmux attach -t {SESSION}` from one)")
    elif attach:
        _attach()
