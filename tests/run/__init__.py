"""Tests of run/: composing a run from the command line (precedence, dispatch)."""
