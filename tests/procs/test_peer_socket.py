"""A session's messaging socket leaves nothing behind: a closed listener's accepting thread ends, and a start that
failed gives up its claim on the path (a later session of the same process can listen there)."""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentteams.procs.peer_socket import Inbound, Listener, deliver


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A directory whose socket paths fit AF_UNIX's 107 bytes (pytest's tmp_path may not)."""
    directory = Path(tempfile.mkdtemp(prefix="ps-", dir="/tmp"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def _accepting() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "peer-socket"]


def test_close_ends_the_accepting_thread_and_the_socket(short_dir: Path) -> None:
    before = set(_accepting())
    got: list[Inbound] = []
    listener = Listener(short_dir / "1.sock", got.append)
    listener.start()
    [thread] = set(_accepting()) - before
    deliver(str(short_dir / "1.sock"), b"hello\n")
    assert [i.data for i in got] == [b"hello\n"]
    listener.close()
    thread.join(5.0)
    assert not thread.is_alive(), "the accepting thread outlived its listener"
    assert not (short_dir / "1.sock").exists()


def test_a_failed_start_leaves_no_claim_on_the_path(short_dir: Path) -> None:
    path = short_dir / "2.sock"
    path.write_text("not a socket")  # bind refuses it (it is no dead session's socket to replace)
    with pytest.raises(OSError):
        Listener(path, lambda _i: None).start()
    path.unlink()
    again = Listener(path, lambda _i: None)
    again.start()  # before: "held by another session of this process"
    try:
        assert path.is_socket()
    finally:
        again.close()
