"""Claude Code's settings files (user, project, local, `--settings`, managed): the one reader of them.

`load.load_settings` merges them with Claude Code's precedence into a typed `Settings`; `keyhelper` runs `apiKeyHelper`.
"""
