"""`agentteams mock-api`: serve the project's scripted Messages API until Ctrl-C or SIGTERM."""

import signal
import threading
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command()
def mock_api(
    script: Annotated[Path, typer.Option("--script", help="The JSON script of routes and turns.")],
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: any free port).")] = 0,
    log: Annotated[Path | None, typer.Option("--log", help="Append each request to this JSONL file.")] = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
) -> None:
    """Serve a scripted Messages API offline.

    Point ANTHROPIC_BASE_URL at the printed address; the script format is in docs/mock-api.md.
    """
    from agentteams.mockapi import MockServer  # imported here so the rest of the CLI starts fast

    server = MockServer(script, log_path=log, port=port, host=host)
    done = threading.Event()

    def _stop(signum: int, frame: FrameType | None) -> None:
        done.set()

    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.start()
        typer.echo(f"listening on {server.base_url}")
        typer.get_text_stream("stdout").flush()
        while not done.wait(0.5):
            pass
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
