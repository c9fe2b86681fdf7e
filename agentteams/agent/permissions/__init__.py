"""Permission decisions: the modes and allow/ask/deny rules (`policy`), with the rule kinds for Bash commands,
path-checked shell commands, web domains and the settings files' rules."""
