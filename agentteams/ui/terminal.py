"""The REPL's output stream on a terminal: every write, from any thread, is done by the prompt's event loop.

So output lands above the input line and never interleaves with the prompt drawing itself (patch_stdout's
proxy writes straight to the terminal when it catches the prompt between two lines, and that races).
"""

from __future__ import annotations

import asyncio
import functools
import io
import threading
from typing import TextIO


class LoopWriter(io.TextIOBase):
    """A text stream for rich's Console; while `serve` runs, a flush hands the text to the prompt's loop."""

    def __init__(self, out: TextIO) -> None:
        super().__init__()
        self._out = out
        self._lock = threading.Lock()
        self._buffer: list[str] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[str | None] | None = None

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._out.isatty()

    def fileno(self) -> int:
        return self._out.fileno()

    async def serve(self) -> None:
        """Run as a task on the prompt's loop until `stop`: writes what threads flush, in order, above the prompt."""
        from prompt_toolkit.application import get_app_or_none, run_in_terminal

        queue: asyncio.Queue[str | None] = asyncio.Queue()
        with self._lock:
            self._loop, self._queue = asyncio.get_running_loop(), queue
        done = False
        while not done:
            parts = [await queue.get()]
            while not queue.empty():
                parts.append(queue.get_nowait())
            done = None in parts
            text = "".join(p for p in parts if p)
            app = get_app_or_none()
            if not text:
                continue
            if app is None or not app.is_running:
                self._direct(text)
            else:
                await run_in_terminal(functools.partial(self._direct, text))

    def stop(self) -> None:
        """Write directly from now on; `serve` writes what is still queued, then ends."""
        with self._lock:
            loop, queue, self._loop, self._queue = self._loop, self._queue, None, None
        if loop is not None and queue is not None:
            loop.call_soon_threadsafe(queue.put_nowait, None)

    def write(self, text: str) -> int:
        with self._lock:
            self._buffer.append(text)
        return len(text)

    def flush(self) -> None:
        with self._lock:
            text, self._buffer = "".join(self._buffer), []
            loop, queue = self._loop, self._queue
            if text and loop is not None and queue is not None:
                try:  # under the lock: a stop() cannot slip in between and strand the text after the sentinel
                    loop.call_soon_threadsafe(queue.put_nowait, text)
                    return
                except RuntimeError:  # the loop closed meanwhile: nothing draws a prompt any more
                    pass
        if text:
            self._direct(text)

    def _direct(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()
