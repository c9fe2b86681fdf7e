"""`agentteams doctor`: one line per thing agent teams need (tmux, config dir, settings, key, API, claude, inotify) and
the warm `-p` server; `--stop-warm` stops this user's warm servers.

Each check says ok / info / warn / fail and, when not ok, the fix; no key or any part of one is ever printed.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from agentteams.model.providers import ProviderConfig

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
MIN_TMUX = (3, 2)
NET_TIMEOUT = 2.0  # seconds for the API round trip; the whole check is bounded a little above it
DEFAULT_API = "https://api.anthropic.com"
COLORS = {"ok": "green", "info": "cyan", "warn": "yellow", "fail": "red"}


@dataclass
class Check:
    name: str
    status: str  # ok | info | warn | fail
    detail: str
    fix: str = ""


def _run(argv: list[str], timeout: float = 5.0) -> str | None:
    """First line of a program's output, or None when it cannot be run in time."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (proc.stdout or proc.stderr).strip().splitlines()
    return lines[0].strip() if lines else ""


def check_tmux() -> Check:
    from agentteams.backends.tmux import program, program_version

    path = program()
    fix = "install tmux 3.2 or newer (apt install tmux, brew install tmux); without it teammates run in-process"
    if path is None:
        return Check("tmux", "warn", "tmux is not on PATH", fix)
    version = program_version(path)
    found = re.search(r"(\d+)\.(\d+)", version or "")
    if found is None:
        return Check("tmux", "warn", f"{path} did not report a version ({version!r})", fix)
    if (int(found[1]), int(found[2])) < MIN_TMUX:
        return Check("tmux", "warn", f"{version} is older than 3.2 ({path})", fix)
    return Check("tmux", "ok", f"{version} ({path})")


def check_session() -> Check:
    from agentteams.backends.tmux import current_pane, inside_tmux, socket_override

    override = socket_override()
    if inside_tmux():
        where = f"inside tmux (pane {current_pane() or '?'})"
        mode = "teammates open as panes beside this one"
    else:
        where = "outside tmux"
        mode = "teammates run in-process; --teammate-mode tmux puts them in the detached session agentteams-swarm"
    server = f"; tmux server: {override} (AGENTTEAMS_TMUX_SOCKET)" if override else ""
    return Check("session", "info", f"{where}: {mode}{server}")


def check_config_dir() -> Check:
    from agentteams.store.paths import Layout

    root = Layout.from_env().root
    fix = f"make {root} writable, or point CLAUDE_CONFIG_DIR at a writable directory"
    if not root.exists():
        parent = next((p for p in root.parents if p.exists()), None)
        if parent is not None and parent.is_dir() and os.access(parent, os.W_OK | os.X_OK):
            return Check("config dir", "ok", f"{root} does not exist yet; it will be created")
        return Check("config dir", "fail", f"{root} does not exist and cannot be created", fix)
    probe = root / f".agentteams-doctor-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        probe.unlink()
    except OSError as e:
        return Check("config dir", "fail", f"cannot write in {root}: {e.strerror or e}", fix)
    return Check("config dir", "ok", f"{root} is writable")


def check_settings() -> Check:
    from agentteams.settings.load import SettingsError, load_settings

    fix = "fix the file named (it is left out whole until then); `agentteams config` shows what is in effect"
    try:
        found = load_settings(Path.cwd())
    except SettingsError as e:
        return Check("settings", "warn", str(e), fix)
    if found.problems:
        more = f" (and {len(found.problems) - 1} more)" if len(found.problems) > 1 else ""
        return Check("settings", "warn", found.problems[0] + more, fix)
    files = list(dict.fromkeys(o.path for o in found.origins.values()))
    if not files:
        return Check("settings", "info", "no settings files here (user, .claude/settings.json, settings.local.json)")
    return Check("settings", "ok", f"read {', '.join(files)}; `agentteams config` shows each value")


def _key_helper() -> str | None:
    """Where an apiKeyHelper is set (it is not run here), or None."""
    from agentteams.settings.load import SettingsError, load_settings

    try:
        found = load_settings(Path.cwd())
    except SettingsError:
        return None
    origin = found.origins.get("apiKeyHelper")
    return str(origin) if found.api_key_helper and origin else None


def check_key() -> Check:
    from agentteams.model.config import MissingCredentialsError, ModelConfig
    from agentteams.model.providers import ProviderConfig, ProviderError
    from agentteams.model.urls import BadBaseURLError

    try:
        provider = ProviderConfig.from_env(os.environ)
        if provider is not None:  # Bedrock or Vertex: their own credentials, which only a request can check
            return Check("api key", "ok", f"{provider.summary()}; its credentials are checked on first use")
        ModelConfig.from_env()
    except (ProviderError, BadBaseURLError) as e:
        if provider_selected():
            return Check("api key", "fail", str(e))
    except MissingCredentialsError:
        helper = _key_helper()
        if helper is not None:
            return Check(
                "api key", "ok", f"none in the environment; apiKeyHelper from {helper} gives it (not run here)"
            )
        fix = "export ANTHROPIC_API_KEY=<your key> (console.anthropic.com), or try `agentteams demo` offline"
        return Check("api key", "fail", "neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set", fix)
    names = [n for n in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN") if os.environ.get(n, "").strip()]
    return Check("api key", "ok", f"{' and '.join(names)} set (value not shown)")


def _provider() -> "ProviderConfig | None":
    """The selected provider's config; None without one, or when it is misconfigured (the key check says how)."""
    from agentteams.model.providers import ProviderConfig, ProviderError

    try:
        return ProviderConfig.from_env(os.environ)
    except ProviderError:
        return None


def provider_selected() -> bool:
    from agentteams.model.providers import selected

    return selected(os.environ) is not None


def check_base_url() -> Check:
    """A HEAD request, without credentials: any HTTP answer means the server is reachable."""
    import urllib.error
    import urllib.request

    from agentteams.model.urls import BadBaseURLError, check_base_url, display_url

    raw = os.environ.get("ANTHROPIC_BASE_URL", "").strip()
    where = "ANTHROPIC_BASE_URL"
    try:
        url = check_base_url(raw) if raw else DEFAULT_API
        provider = _provider()
        if provider is not None:  # Bedrock or Vertex: its endpoint, not Anthropic's
            url, where = provider.base_url or provider.endpoint(provider.region), provider.url_variables
    except BadBaseURLError as e:
        return Check("api url", "fail", str(e), "set ANTHROPIC_BASE_URL to http(s)://host[:port], or unset it")
    shown = display_url(url)
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=NET_TIMEOUT) as resp:
            status = resp.status
    except urllib.error.HTTPError as e:  # an HTTP error status still proves the server answers
        status = e.code
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", None) or e
        fix = f"check the network, proxy (HTTPS_PROXY) or {where}; `agentteams demo` runs offline"
        return Check("api url", "fail", f"cannot reach {shown}: {reason}", fix)
    return Check("api url", "ok", f"{shown} answers (HTTP {status})")


def check_claude() -> Check:
    path = shutil.which("claude")
    fix = "npm install -g @anthropic-ai/claude-code (needed only for teams that mix in real Claude Code agents)"
    if path is None:
        return Check("claude", "warn", "no `claude` on PATH", fix)
    version = _run([path, "--version"], timeout=10.0)
    if version is None:
        return Check("claude", "warn", f"{path} --version did not answer within 10s", fix)
    if "Claude Code" not in version:
        return Check("claude", "warn", f"{path} is not Claude Code (--version says {version[:60]!r})", fix)
    return Check("claude", "ok", f"{version} ({path})")


def check_inotify() -> Check:
    import tempfile

    from agentteams.store.fs.watch import ENV_MODE, FileWatcher

    with tempfile.TemporaryDirectory() as tmp, FileWatcher([Path(tmp) / "probe"]) as watcher:
        mode = watcher.mode
    if mode == "inotify":
        return Check("inotify", "ok", "agents wake on inbox changes within milliseconds")
    if os.environ.get(ENV_MODE, "").strip().lower() == "poll":
        fix = f"unset {ENV_MODE}"
    else:
        fix = "raise fs.inotify.max_user_instances / max_user_watches (sysctl), or run on Linux"
    return Check("inotify", "warn", "inotify unavailable: agents poll for inbox changes (slower wake-ups)", fix)


def check_warm() -> Check:
    from agentteams.procs.warm import client as warm

    off = "set AGENTTEAMS_NO_WARM=1 to run every -p cold and start none; `agentteams doctor --stop-warm` stops it"
    if os.environ.get(warm.DISABLE_VAR):
        return Check("warm -p", "info", f"off ({warm.DISABLE_VAR} is set): every -p run starts cold")
    try:
        servers = warm.running()
    except Exception as e:  # the private socket directory is unusable: runs stay cold
        return Check("warm -p", "warn", f"no warm -p server possible: {e}", "see the socket directory's message")
    ours = [s for s in servers if s.ours]
    others = f"; {len(servers) - len(ours)} of other installs" if len(servers) > len(ours) else ""
    if not ours:
        return Check("warm -p", "info", f"no server for this install yet: the next -p run starts one{others}", off)
    idle = f"{warm.IDLE_VAR}, {warm.IDLE_DEFAULT:.0f}s by default"
    return Check("warm -p", "info", f"server pid {ours[0].pid} serves this install's -p runs until idle ({idle})"
                 f"{others}", off)  # fmt: skip


def check_install() -> Check:
    """What `claude doctor` puts first: the running version, how it was installed, the platform and the path."""
    import platform

    from agentteams import __version__

    where = shutil.which("agentteams") or sys.argv[0]
    return Check("install", "info", f"agentteams {__version__} (pip, Python {platform.python_version()}) on "
                 f"{sys.platform}-{platform.machine()}: {where}; updates: `agentteams update` says how")  # fmt: skip


def run_checks() -> list[Check]:
    """Every check, in display order; the network one runs meanwhile in a thread, bounded so it never hangs."""
    result: list[Check] = []
    net = threading.Thread(target=lambda: result.append(check_base_url()), name="doctor-net", daemon=True)
    net.start()
    local = [check_tmux(), check_session(), check_config_dir(), check_settings(), check_key()]
    net.join(NET_TIMEOUT + 1.0)  # DNS lookups ignore the socket timeout: never wait on them past this
    url = result[0] if result else Check("api url", "fail", "no answer within 3s", "check the network or proxy")
    return [check_install(), *local, url, check_claude(), check_inotify(), check_warm()]


def _scrubbed(check: Check) -> Check:
    """Belt and braces: no check prints a key, but no line leaves here holding one either."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        secret = os.environ.get(name, "").strip()
        if secret:
            check.detail, check.fix = check.detail.replace(secret, "***"), check.fix.replace(secret, "***")
    return check


def _line(check: Check, color: bool) -> str:
    status = f"{check.status:<4}"
    if color:
        status = typer.style(status, fg=COLORS[check.status], bold=check.status == "fail")
    fix = f" — fix: {check.fix}" if check.fix and check.status != "ok" else ""
    return f"{status}  {check.name:<10}  {check.detail}{fix}"


@app.command()
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    stop_warm: Annotated[
        bool, typer.Option("--stop-warm", help="Stop this user's warm -p servers (every install's) and exit.")
    ] = False,
) -> None:
    """Check what agent teams need here; one line per check, with the fix. Exit status 1 if any check fails."""
    if stop_warm:
        from agentteams.procs.warm import client as warm

        stopped = warm.stop_all()
        typer.echo(f"stopped {len(stopped)} warm -p server(s)" + "".join(f"; pid {s.pid}" for s in stopped))
        return
    checks = [_scrubbed(c) for c in run_checks()]
    failed = any(c.status == "fail" for c in checks)
    if as_json:
        data = {"ok": not failed, "checks": [asdict(c) for c in checks]}
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        for check in checks:
            typer.echo(_line(check, color))
    if failed:
        raise typer.Exit(1)
