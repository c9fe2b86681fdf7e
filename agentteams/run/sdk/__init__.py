"""Driven by a program over stdin/stdout, as the Claude Agent SDKs drive Claude Code: stream-json in and out, the
control protocol (channel.py), the program's answers to permission questions and hooks (asks.py)."""
