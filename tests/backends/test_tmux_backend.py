"""The tmux backend against a real tmux server on a private socket."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentteams.backends import tmux as tmux_mod
from agentteams.backends.tmux import SWARM_SESSION, PaneRecord, TmuxBackend, TmuxError
from tests.support.procs import pid_alive
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

PANE_OPTIONS = {
    "pane-border-style": "fg=blue",
    "pane-active-border-style": "fg=blue",
    "pane-border-format": "#[fg=blue,bold] #{pane_title} #[default]",
    "remain-on-exit": "failed",
}


@pytest.fixture
def sock(tmux: Tmux, tmp_path: Path) -> Path:
    """The socket of a tmux server with one session (`lead`, running a shell)."""
    tmux.start(None, tmp_path, [])
    return tmux.sock


@pytest.fixture
def backend(sock: Path) -> TmuxBackend:
    return TmuxBackend(str(sock))


@pytest.fixture
def lead(tmux: Tmux, sock: Path) -> str:
    return tmux.run("display-message", "-p", "-t", "lead:", "#{pane_id}")


def test_spawned_command_runs_in_cwd_with_env(backend: TmuxBackend, tmux: Tmux, lead: str, tmp_path: Path) -> None:
    work = tmp_path / "work dir"
    work.mkdir()
    script = 'echo "$FOO" > marker.tmp; pwd >> marker.tmp; echo $$ >> marker.tmp; mv marker.tmp marker; exec sleep 60'
    pane = backend.spawn_pane(lead, "alice", "blue", ["sh", "-c", script], work, {"FOO": "it's $x"})
    assert re.fullmatch(r"%\d+", pane)
    marker = work / "marker"
    wait_until(marker.exists, 10, "the command to write its marker")
    foo, cwd, child = marker.read_text().splitlines()
    assert foo == "it's $x"
    assert Path(cwd).resolve() == work.resolve()

    assert tmux.run("display-message", "-p", "-t", pane, "#{pane_title}") == "alice"
    # one option at a time: tmux 3.3a's `show-options -p` listing leaves the style options out
    options = {o: tmux.run("show-options", "-p", "-v", "-t", pane, o) for o in PANE_OPTIONS}
    assert options == PANE_OPTIONS
    assert tmux.run("show-options", "-w", "-v", "-t", pane, "pane-border-status") == "top"

    assert backend.pane_alive(pane)
    pid = backend.pane_pid(pane)
    assert pid is not None
    backend.kill_pane(pane)
    assert not backend.pane_alive(pane)
    assert backend.pane_pid(pane) is None
    wait_until(lambda: not pid_alive(pid) and not pid_alive(int(child)), 10, "the pane's processes to end")
    backend.kill_pane(pane)  # already gone: no error


def test_command_that_exits_at_once_spawns_reliably(backend: TmuxBackend, lead: str, tmp_path: Path) -> None:
    for i in range(20):
        pane = backend.spawn_pane(lead, f"quick{i}", "green", ["true"], tmp_path, {})
        assert re.fullmatch(r"%\d+", pane)
    assert backend.pane_alive(lead)


def test_failed_command_leaves_a_dead_pane(backend: TmuxBackend, tmux: Tmux, lead: str, tmp_path: Path) -> None:
    pane = backend.spawn_pane(lead, "crash", "red", "exit 3", tmp_path, {})
    wait_until(lambda: not backend.pane_alive(pane), 10, "the command to fail")
    # the pane is kept (remain-on-exit failed); its exit status shows once tmux has reaped it
    wait_until(lambda: tmux.exit_status(pane) == 3, 10, "the dead pane to show exit status 3")
    record = backend.pane(pane)
    assert record is not None and (record.dead, record.exit_status) == (True, 3)
    backend.kill_pane(pane)


def test_fifth_and_later_teammates_go_to_a_new_window(
    backend: TmuxBackend, tmux: Tmux, lead: str, tmp_path: Path
) -> None:
    panes = [backend.spawn_pane(lead, f"t{i}", "cyan", ["sleep", "60"], tmp_path, {}) for i in range(6)]
    windows = [tmux.run("display-message", "-p", "-t", p, "#{window_id}") for p in [lead, *panes]]
    assert len(set(windows[:5])) == 1
    assert windows[5] == windows[6] != windows[0]
    assert tmux.run("display-message", "-p", "-t", lead, "#{pane_left}") == "0"
    assert all(backend.pane_alive(p) for p in panes)


def test_without_a_target_uses_the_swarm_session(backend: TmuxBackend, tmux: Tmux, tmp_path: Path) -> None:
    first = backend.spawn_pane(None, "a", "blue", ["sleep", "60"], tmp_path, {})
    second = backend.spawn_pane(None, "b", "green", ["sleep", "60"], tmp_path, {})
    for pane in (first, second):
        assert tmux.run("display-message", "-p", "-t", pane, "#{session_name}") == SWARM_SESSION
    backend.select_pane(second, zoom=True)
    assert tmux.run("display-message", "-p", "-t", second, "#{window_zoomed_flag} #{pane_active}") == "1 1"
    backend.select_pane(second, zoom=False)
    assert tmux.run("display-message", "-p", "-t", second, "#{window_zoomed_flag}") == "0"


@pytest.mark.parametrize("key", ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"])
def test_refuses_a_key_on_the_command_line(
    backend: TmuxBackend, tmux: Tmux, lead: str, tmp_path: Path, key: str
) -> None:
    before = tmux.run("list-panes", "-a", "-F", "#{pane_id}")
    with pytest.raises(ValueError, match=key) as info:
        backend.spawn_pane(lead, "alice", "blue", ["true"], tmp_path, {key: "sk-secret"})
    assert "sk-secret" not in str(info.value)
    assert tmux.run("list-panes", "-a", "-F", "#{pane_id}") == before


def test_tmux_failures_are_one_line_errors(tmux: Tmux, tmp_path: Path) -> None:
    backend = TmuxBackend(str(tmux.sock))  # no server listens there
    with pytest.raises(TmuxError) as info:
        backend.spawn_pane("%0", "alice", "blue", ["true"], tmp_path, {})
    assert "\n" not in str(info.value)
    assert not backend.pane_alive("%0")
    assert backend.pane_pid("%0") is None
    with pytest.raises(TmuxError):
        backend.list_panes()
    assert backend.pane("%0") is None
    assert tmux_mod.probe_panes(str(tmux.sock)) is None  # status's look: no server, no panes known


def test_pane_listing_is_typed(backend: TmuxBackend, tmux: Tmux, lead: str, tmp_path: Path) -> None:
    beside = backend.spawn_pane(lead, "alice", "blue", ["sleep", "60"], tmp_path, {}, tag="alice@t")
    swarm = backend.spawn_pane(None, "bob", "green", ["sleep", "60"], tmp_path, {}, tag="bob@t")
    tmux.run("set-option", "-p", "-t", swarm, "@agentteams-agent", "b|o\tb\x1fx@t")  # as another program might
    wait_until(lambda: all(p.command == "sleep" for p in backend.list_panes() if p.pane_id != lead), 10, "sleep")
    panes = {p.pane_id: p for p in backend.list_panes()}
    assert set(panes) == {lead, beside, swarm}
    alice, bob = panes[beside], panes[swarm]
    assert (alice.title, alice.tag, alice.session, alice.teammate_window, alice.dead) == ("alice", "alice@t", "lead",
                                                                                          False, False)  # fmt: skip
    assert alice.exit_status is None and alice.pid is not None and alice.pid > 0
    assert alice.window == panes[lead].window and panes[lead].tag == ""
    assert (bob.session, bob.teammate_window, bob.tag) == (SWARM_SESSION, True, "b|o\tb\x1fx@t")  # the tag is last
    assert backend.pane(swarm) == bob and backend.pane("%999") is None
    assert tmux_mod.probe_panes(str(tmux.sock)) == panes  # status's look, without libtmux: the same panes
    tmux.run("select-pane", "-t", beside, "-T", "a|b c")
    assert backend.pane(beside) == PaneRecord(**{**alice.__dict__, "title": "a|b c"})


def test_where_this_process_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (tmux_mod.inside_tmux(), tmux_mod.current_pane(), tmux_mod.default_socket()) == (False, None, None)
    monkeypatch.setenv("TMUX_PANE", "%3")  # without $TMUX a pane id means nothing
    assert tmux_mod.current_pane() is None
    monkeypatch.setenv("TMUX", "/tmp/tmux-1/default,123,0")
    assert (tmux_mod.inside_tmux(), tmux_mod.current_pane()) == (True, "%3")
    assert tmux_mod.enclosing_server() == tmux_mod.default_socket() == "/tmp/tmux-1/default"
    monkeypatch.setenv("AGENTTEAMS_TMUX_SOCKET", " /tmp/private.sock ")
    assert (tmux_mod.socket_override(), tmux_mod.default_socket()) == ("/tmp/private.sock", "/tmp/private.sock")
    assert TmuxBackend().client_argv("attach-session") == ["tmux", "-S", "/tmp/private.sock", "attach-session"]
