"""Re-record the golden transcripts of the real Claude Code (tests/golden-<version>/transcripts/), offline against
the project's scripted Messages API server. See that directory's README.md for what the files show.

Usage: python scripts/record_transcripts.py [--version 2.1.330] [--only plain,tools] [--out DIR]

Runs under the fixed scratch root /tmp/ccgold/<version>/<scenario> (wiped per scenario), so that the cwd and its slug in
the files are the same on every machine; ids, timestamps and hashes are normalised, the CLI's own prompt text elided.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import realclaude as rc  # noqa: E402
from tests.support.transcript_rec import write_golden  # noqa: E402

SCRATCH = Path("/tmp/ccgold")  # /tmp/ccgold/<version>/<scenario>


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", default=rc.DEFAULT, choices=rc.VERSIONS)
    ap.add_argument("--only", default="", help="comma-separated scenario names (default: all)")
    ap.add_argument("--out", type=Path, default=None, help="default: tests/golden-<version>/transcripts")
    args = ap.parse_args()
    out = args.out or ROOT / "tests" / f"golden-{args.version}" / "transcripts"
    names = {n for n in args.only.split(",") if n}
    for name in write_golden(args.version, out, SCRATCH / args.version, names or None):
        print(f"recorded {name} -> {out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
