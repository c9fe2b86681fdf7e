"""The permission parity corpus: rules x Bash, Write and Read calls, each with what Claude Code 2.1.332 does (observed
offline with its real CLI) — shell constructs under prefix rules (redirections, expansions, wrappers, `cd`,
here-documents), protected and sensitive paths, Read and Edit rules over Bash, acceptEdits, settings with newer or
wrong values, `--permission-mode manual` and `--restricted`. The interop tier runs it through both CLIs; the fast
tier through our policy alone."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.support.permworld import SECRET, Arrangement, Case, Outcome, any_of, created, read_it, removed

W = "{W}"
Effect = Callable[[Path, str], bool]


def says(text: str) -> Effect:
    """The call's output was exactly this (its effect is what it printed)."""
    return lambda _w, out: out.strip() == text


def shows(needle: str) -> Effect:
    """The call's output holds this (`{W}` is the world's path)."""
    return lambda w, out: needle.replace(W, str(w)) in out


def edited(rel: str, needle: str) -> Effect:
    def seen(w: Path, _out: str) -> bool:
        try:
            return needle in (w / rel).read_text()
        except OSError:
            return False

    return seen


def globbed(rel: str, pattern: str) -> Effect:
    return lambda w, _out: any((w / rel).glob(pattern))


def bash(command: str, ran: Effect, expect: Outcome) -> Case:
    return Case(command, "Bash", {"command": command, "description": "parity corpus"}, ran, expect)


def write(rel: str, expect: Outcome) -> Case:
    return Case(f"Write {rel}", "Write", {"file_path": f"{W}/{rel}", "content": "parity\n"}, created(rel), expect)


def read(rel: str, expect: Outcome) -> Case:
    return Case(f"Read {rel}", "Read", {"file_path": f"{W}/{rel}"}, read_it, expect)


HOME_SHOWN = shows(f"{W}/home")
SELF_GRANT = 'echo \'{"permissions":{"allow":["Bash"]}}\' > .claude/settings.local.json'  # grants itself all

UNDER_ECHO = Arrangement(
    "allow Bash(echo:*) Bash(cat:*)",
    project={"permissions": {"allow": ["Bash(echo:*)", "Bash(cat:*)"]}},
    cases=(
        bash("echo e-plain", says("e-plain"), "allow"),
        bash("echo x > .git/hooks/pre-commit", created("repo/.git/hooks/pre-commit"), "deny"),
        bash("echo x >> ~/.bashrc", created("home/.bashrc"), "deny"),
        bash("echo x > ../outside/o.txt", created("outside/o.txt"), "deny"),
        bash("echo x > inside.txt", created("repo/inside.txt"), "deny"),
        bash("echo x 2> err.txt", created("repo/err.txt"), "deny"),
        bash("echo x &> both.txt", created("repo/both.txt"), "deny"),
        bash("echo x >| clob.txt", created("repo/clob.txt"), "deny"),
        bash("echo hidden > /dev/null; echo e-null", says("e-null"), "allow"),
        bash("echo e-dup 2>&1", says("e-dup"), "allow"),
        bash("echo ${HOME}", HOME_SHOWN, "deny"),
        bash("echo $HOME", HOME_SHOWN, "allow"),
        bash('echo "$HOME"', HOME_SHOWN, "allow"),
        bash("echo ~", HOME_SHOWN, "allow"),
        bash("echo *", shows("notes.txt"), "allow"),
        bash("echo $(touch sub1)", created("repo/sub1"), "deny"),
        bash("echo `touch sub2`", created("repo/sub2"), "deny"),
        bash("echo x | tee t.txt", created("repo/t.txt"), "deny"),
        bash("echo a && touch chain1", created("repo/chain1"), "deny"),
        bash("echo a; touch chain2", created("repo/chain2"), "deny"),
        bash("echo 'touch pipe-sh' | sh", created("repo/pipe-sh"), "deny"),
        bash('echo a > "$HOME/x"', created("home/x"), "deny"),
        bash("echo x > ~/plain.txt", created("home/plain.txt"), "deny"),
        bash("echo x > .mcp.json", created("repo/.mcp.json"), "deny"),
        bash("echo x > .gitconfig", created("repo/.gitconfig"), "deny"),
        bash(SELF_GRANT, created("repo/.claude/settings.local.json"), "deny"),
        bash("echo x > .vscode/settings.json", created("repo/.vscode/settings.json"), "deny"),
        bash("echo x > .claude/commands/c.md", created("repo/.claude/commands/c.md"), "deny"),
        bash("cat <<EOF > hd.txt\nhi\nEOF", created("repo/hd.txt"), "deny"),
        bash("cat <<EOF\nheredoc-out\nEOF", shows("heredoc-out"), "deny"),
        bash("echo x > src/$(whoami).txt", globbed("repo/src", "*.txt"), "deny"),
        bash("echo x > docs/../docs2.txt", created("repo/docs2.txt"), "deny"),
        bash(f"echo x > {W}/outside/abs.txt", created("outside/abs.txt"), "deny"),
    ),
)

UNDER_GIT_LOG = Arrangement(
    "--allowedTools Bash(git log:*)",
    flags=("--allowedTools", "Bash(git log:*)"),
    cases=(
        bash("git log > gl.txt", created("repo/gl.txt"), "deny"),
        bash("git log; touch gl3", created("repo/gl3"), "deny"),
        bash("git log -1 | tee gl4.txt", created("repo/gl4.txt"), "deny"),
        bash("git log -1 --format=%s -o gl5.txt", created("repo/gl5.txt"), "deny"),
    ),
)

UNDER_TOUCH = Arrangement(
    "allow Bash(touch:*)",
    project={"permissions": {"allow": ["Bash(touch:*)"]}},
    cases=(
        bash("touch w0", created("repo/w0"), "allow"),
        bash("env X=1 touch w1", created("repo/w1"), "deny"),
        bash("X=1 touch w2", created("repo/w2"), "deny"),
        bash("sh -c 'touch w3'", created("repo/w3"), "deny"),
        bash('bash -c "touch w4"', created("repo/w4"), "deny"),
        bash("eval touch w5", created("repo/w5"), "deny"),
        bash("xargs touch <<< w6a", created("repo/w6a"), "allow"),
        bash("echo w6b | xargs touch", created("repo/w6b"), "allow"),
        bash("find . -maxdepth 0 -exec touch w7 \\;", created("repo/w7"), "deny"),
        bash("(touch w8)", created("repo/w8"), "deny"),
        bash("{ touch w9; }", created("repo/w9"), "deny"),
        bash("cd src && touch w10", created("repo/src/w10"), "deny"),
        bash("cd .. && touch w11", created("w11"), "deny"),
        bash("touch .git/w13", created("repo/.git/w13"), "deny"),
        bash("touch ../outside/w14", created("outside/w14"), "deny"),
        bash("touch ~/w15", created("home/w15"), "deny"),
        bash("touch $HOME/w16", created("home/w16"), "deny"),
        bash("touch w{17,18}", any_of("repo/w17", "repo/w18"), "deny"),
        bash("touch w19*", globbed("repo", "w19*"), "deny"),
        bash("nohup touch w20", created("repo/w20"), "allow"),
        bash("timeout 5 touch w21", created("repo/w21"), "allow"),
        bash("command touch w23", created("repo/w23"), "allow"),
        bash("touch -- w24", created("repo/w24"), "allow"),
        bash('touch "w 25"', created("repo/w 25"), "allow"),
        bash("touch .claude/w26", created("repo/.claude/w26"), "deny"),
        bash("touch src/w27", created("repo/src/w27"), "allow"),
        bash(f"touch {W}/repo/w28", created("repo/w28"), "allow"),
        bash("nice touch w31", created("repo/w31"), "allow"),
        bash("stdbuf -o0 touch w33", created("repo/w33"), "allow"),
        bash("exec touch w34", created("repo/w34"), "deny"),
        bash("touch w35 # a comment", created("repo/w35"), "allow"),
        bash("touch w36\ntouch w37", created("repo/w37"), "allow"),
        bash("A=1; touch wa", created("repo/wa"), "allow"),
        bash("[ -d src ] && touch wb", created("repo/wb"), "allow"),
        bash("PATH=$PATH:/nowhere; touch wp", created("repo/wp"), "deny"),
    ),
)

NO_RULES = Arrangement(
    "no rules",
    cases=(
        bash("ls > ls.txt", created("repo/ls.txt"), "deny"),
        bash("cat notes.txt > copy.txt", created("repo/copy.txt"), "deny"),
        bash("cat notes.txt | tee copy2.txt", created("repo/copy2.txt"), "deny"),
        bash("ls $HOME", shows("public.txt"), "deny"),
        bash("cat < notes.txt", read_it, "allow"),
        bash("grep secret notes.txt 2>/dev/null", read_it, "allow"),
        bash("sed -n 1p notes.txt", read_it, "allow"),
        bash("tr a b < notes.txt", shows(SECRET.replace("a", "b")), "allow"),
        bash("wc -l notes.txt > wc.txt", created("repo/wc.txt"), "deny"),
        bash("ls ~", shows("public.txt"), "deny"),
        bash("cat ~/public.txt", read_it, "deny"),
        bash("echo $(cat notes.txt)", read_it, "deny"),
        bash("cat notes.txt | sort | head -1", read_it, "allow"),
        bash("sleep 0.1 && cat notes.txt", read_it, "allow"),
        bash("sleep $(cat notes.txt)", read_it, "deny"),
        bash("find . -name notes.txt", shows("./notes.txt"), "allow"),
        bash("sed -i s/notes/NOTES/ notes.txt", edited("repo/notes.txt", "NOTES"), "deny"),
        bash("find . -name junk.txt -delete", removed("repo/junk.txt"), "deny"),
        bash("timeout 5 cat notes.txt", read_it, "allow"),
        bash("env cat notes.txt", read_it, "deny"),
        bash("X=1 cat notes.txt", read_it, "deny"),
        bash("sh -c 'cat notes.txt'", read_it, "deny"),
        bash("(cat notes.txt)", read_it, "deny"),
        bash("cd src && cat ../notes.txt", read_it, "deny"),
        bash("cd src && ls", shows("locked"), "allow"),
        bash("echo n1 | xargs touch", created("repo/n1"), "deny"),
        bash("timeout 5 touch n3", created("repo/n3"), "deny"),
        bash("git init -q n6", created("repo/n6"), "deny"),
        bash("[ -f notes.txt ] && cat notes.txt", read_it, "deny"),
        bash("PATH=/usr/bin:$PATH; cat notes.txt", read_it, "deny"),
    ),
)

ACCEPT_EDITS = Arrangement(
    "acceptEdits: shell writes and protected files",
    project={"permissions": {"defaultMode": "acceptEdits"}},
    cases=(
        bash("touch ae1", created("repo/ae1"), "allow"),
        bash("echo x > ae2.txt", created("repo/ae2.txt"), "allow"),
        bash("mkdir ae3 && touch ae3/f", created("repo/ae3/f"), "allow"),
        bash("touch .claude/ae4", created("repo/.claude/ae4"), "deny"),
        bash("echo x > .git/hooks/pre-commit", created("repo/.git/hooks/pre-commit"), "deny"),
        bash("echo x > ../outside/ae5.txt", created("outside/ae5.txt"), "deny"),
        bash("cp notes.txt ae6.txt", created("repo/ae6.txt"), "allow"),
        bash("sed -i s/junk/JUNK/ junk.txt", edited("repo/junk.txt", "JUNK"), "allow"),
        write("repo/.mcp.json", "deny"),
        write("repo/.bashrc", "deny"),
        write("repo/.gitconfig", "deny"),
        write("repo/.gitmodules", "deny"),
        write("repo/.envrc", "deny"),
        write("repo/.npmrc", "deny"),
        write("repo/.profile", "deny"),
        write("repo/.claude/commands/x.md", "deny"),
        write("repo/.husky/pre-commit", "deny"),
        write("repo/.idea/x.xml", "deny"),
        write("repo/.github/workflows/ci.yml", "allow"),
        write("repo/.gitignore", "allow"),
        write("home/.bashrc", "deny"),
    ),
)

FILE_RULES_OVER_BASH = Arrangement(
    "Read and Edit rules over Bash",
    project={
        "permissions": {
            "allow": ["Bash(touch:*)", "Bash(echo:*)", "Edit(./src/**)"],
            "ask": ["Edit(./aw.txt)"],
            "deny": ["Edit(./dw.txt)", "Read(./secrets/**)"],
        }
    },
    cases=(
        bash("echo x > src/r1.txt", created("repo/src/r1.txt"), "allow"),
        bash("echo x > dw.txt", created("repo/dw.txt"), "deny"),
        bash("echo x > aw.txt", created("repo/aw.txt"), "deny"),
        bash("touch dw.txt", created("repo/dw.txt"), "deny"),
        bash("touch src/dw-not", created("repo/src/dw-not"), "allow"),
        bash("cat secrets/key.txt", read_it, "deny"),
    ),
)

MANUAL_IN_A_FILE = Arrangement(
    "defaultMode manual in a settings file",
    project={"permissions": {"defaultMode": "manual", "deny": ["Read(./secrets/**)"]}},
    cases=(
        read("repo/secrets/key.txt", "deny"),
        read("repo/notes.txt", "allow"),
        bash("touch man1", created("repo/man1"), "deny"),
    ),
)

UNKNOWN_MODE = Arrangement(
    "an unknown defaultMode",
    project={"permissions": {"defaultMode": "nonsense", "deny": ["Read(./secrets/**)"], "allow": ["Bash(touch nz1)"]}},
    cases=(read("repo/secrets/key.txt", "allow"), bash("touch nz1", created("repo/nz1"), "deny")),
)

MANUAL_FLAG = Arrangement(
    "--permission-mode manual",
    flags=("--permission-mode", "manual"),
    cases=(write("repo/f1.txt", "deny"), bash("cat notes.txt", read_it, "allow"), read("outside/r.txt", "deny")),
)

RESTRICTED = Arrangement(
    "--restricted",
    project={"permissions": {"allow": ["Bash", "Write"], "defaultMode": "acceptEdits"}},
    flags=("--restricted",),
    cases=(
        write("repo/f1.txt", "deny"),
        bash("touch f2", created("repo/f2"), "deny"),
        read("repo/notes.txt", "allow"),
        read("outside/r.txt", "deny"),
    ),
)

ARRANGEMENTS = (
    UNDER_ECHO, UNDER_GIT_LOG, UNDER_TOUCH, NO_RULES, ACCEPT_EDITS, FILE_RULES_OVER_BASH, MANUAL_IN_A_FILE,
    UNKNOWN_MODE, MANUAL_FLAG, RESTRICTED,
)  # fmt: skip

# where ours is stricter than Claude Code on purpose: (arrangement, row) -> why
STRICTER = {
    ("an unknown defaultMode", "Read repo/secrets/key.txt"): "Claude Code ignores the whole file over one wrong value, "
    "its deny rules too; ours keeps them (and holds back only what the file grants)",
}
