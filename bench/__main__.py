"""``make bench``: run every benchmark in turn (``python -m bench [NAME ...]``).

Each benchmark is a script in this folder that prints its figures; nothing here
asserts a number. Names: urls, robots, frontier, http, extract, crawl, search, api, neardup.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
ORDER = ["urls", "robots", "http", "extract", "neardup", "frontier", "search", "api", "crawl"]


def main(argv: list[str]) -> int:
    names = argv or ORDER
    failed = []
    for name in names:
        script = HERE / f"bench_{name}.py"
        if not script.exists():
            print(f"== {name}: no bench/{script.name} (skipped)")
            continue
        print(f"== {name}: {sys.executable} {script.relative_to(HERE.parent)}", flush=True)
        started = time.monotonic()
        rc = subprocess.run([sys.executable, str(script)], check=False).returncode
        print(f"== {name}: exit {rc} after {time.monotonic() - started:.0f} s\n", flush=True)
        if rc != 0:
            failed.append(name)
    if failed:
        print("failed: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
