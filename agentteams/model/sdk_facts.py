"""What the installed anthropic SDK sends with each request, read from its files without importing it (the import
costs about a second of CPU, most of it building types a request never uses): its version, the API version it
speaks, the HTTP library it is built on, and the platform headers it derives from this interpreter."""

from __future__ import annotations

import ast
import functools
import importlib.util
import platform
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

HttpLibrary = Literal["httpx", "httpx2"]
_HTTP_LIBRARIES: tuple[HttpLibrary, ...] = ("httpx2", "httpx")


@dataclass(frozen=True)
class SdkFacts:
    """The installed SDK's version, the `anthropic-version` it sends, and the HTTP library its client extends."""

    version: str
    api_version: str
    http_library: HttpLibrary

    def platform_headers(self) -> dict[str, str]:
        """The headers the SDK's base client puts first on every request (its auth and custom ones follow)."""
        return {
            "Accept": "application/json",
            "Content-Type": "application/json",
            "User-Agent": f"Anthropic/Python {self.version}",
            "X-Stainless-Lang": "python",
            "X-Stainless-Package-Version": self.version,
            "X-Stainless-OS": _os_name(),
            "X-Stainless-Arch": _arch(),
            "X-Stainless-Runtime": platform.python_implementation(),
            "X-Stainless-Runtime-Version": platform.python_version(),
        }


@functools.cache
def installed() -> SdkFacts | None:
    """The installed SDK's facts; None when its files do not say them plainly (a layout this reader does not know:
    the caller then asks an imported SDK client instead, slower but never wrong)."""
    spec = importlib.util.find_spec("anthropic")  # finds the package without running its __init__
    if spec is None or spec.origin is None:
        return None
    package = Path(spec.origin).parent
    try:
        version_tree = ast.parse((package / "_version.py").read_text(encoding="utf-8"))
        constants_tree = ast.parse((package / "_constants.py").read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    version = _string_constant(version_tree, "__version__")
    api_version = _string_constant(constants_tree, "ANTHROPIC_API_VERSION")
    library = _http_library(constants_tree)
    if version is None or api_version is None or library is None:
        return None
    return SdkFacts(version, api_version, library)


def _string_constant(tree: ast.Module, name: str) -> str | None:
    """The string a top-level `name = "..."` assigns; None when there is no such plain assignment."""
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)):
            continue
        named = any(isinstance(target, ast.Name) and target.id == name for target in node.targets)
        if named and isinstance(node.value.value, str):
            return node.value.value
    return None


def _http_library(tree: ast.Module) -> HttpLibrary | None:
    """The HTTP library the SDK's constants are built from (its timeouts and limits are that library's types)."""
    for node in tree.body:
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        for library in _HTTP_LIBRARIES:
            if library in names:
                return library
    return None


# As the SDK derives them (anthropic/_base_client.py: get_platform, get_architecture), from the same calls: it avoids
# `platform.platform()`, which forks `uname -p`; tests/model/test_first_party.py holds this to the SDK's own answer.
def _os_name() -> str:
    try:
        system, machine, release = platform.system().lower(), platform.machine().lower(), platform.release().lower()
    except Exception:
        return "Unknown"
    if system in ("ios", "ipados") or machine.startswith(("iphone", "ipad")):
        return "iOS"
    named = {"darwin": "MacOS", "windows": "Windows"}
    if system in named:
        return named[system]
    if system == "android" or hasattr(sys, "getandroidapilevel") or "android" in release:
        return "Android"
    named = {"linux": "Linux", "freebsd": "FreeBSD", "openbsd": "OpenBSD"}
    if system in named:
        return named[system]
    return f"Other:{system}" if system else "Unknown"


def _arch() -> str:
    try:
        machine = platform.machine().lower()
    except Exception:
        return "unknown"
    named = {"arm64": "arm64", "aarch64": "arm64", "arm": "arm", "x86_64": "x64"}
    if machine in named:
        return named[machine]
    if sys.maxsize <= 2**32:
        return "x32"
    return f"other:{machine}" if machine else "unknown"
