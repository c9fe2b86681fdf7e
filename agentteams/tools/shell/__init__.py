"""The shell tools: Bash, background shells (BashOutput, KillShell) and the process groups they run in."""
