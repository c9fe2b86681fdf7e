"""Helpers shared by the test modules: fixtures' workings, scripted scenarios, process and pane drivers, checks."""

import pkgutil
import sys

# Under pytest (imported by then), this package's modules are assertion-rewritten as test modules are, so the
# checks moved here out of test modules still show the values that failed. A script or a child process that
# imports a helper without pytest is left alone.
if "pytest" in sys.modules:
    sys.modules["pytest"].register_assert_rewrite(*(f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__)))
