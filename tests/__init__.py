"""The test suite, by area: a folder per layer of the package, the contract and fault suites, and shared helpers."""

import sys

# Bytecode is kept for the suite even where PYTHONDONTWRITEBYTECODE is set (as in the sessions' shells): without it
# every xdist worker re-parses and re-rewrites the asserts of every test module at each collection, about half of
# the fast tier's collection time. The caches are git-ignored; writes are atomic, so concurrent runs share them.
sys.dont_write_bytecode = False
