"""The command line as a person runs it: commands, `-p` and its headless flags, resume, completions, the demo."""
