"""``make bench``: run every benchmark in turn (``python -m bench [NAME ...]``).

Each benchmark is a script in this folder that prints its figures; nothing here
asserts a number. Names: urls, robots, frontier, politeness, http, extract, crawl,
search, search_multi, api, neardup, near_redis, sitemaps, render, pacing, urlhygiene, priority,
index_retire, profile, memory. A few get arguments here (``ARGS``): a modest size for
``make bench``; run the script itself for the full figures.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
ORDER = [
    "urls",
    "robots",
    "http",
    "extract",
    "neardup",
    "near_redis",
    "frontier",
    "politeness",
    "search",
    "search_multi",
    "api",
    "sitemaps",
    "crawl",
    "render",
    "pacing",
    "urlhygiene",
    "priority",
    "index_retire",
    "profile",
    "memory",
]
# Arguments of a benchmark run from here (its script's defaults otherwise).
ARGS = {
    # The sizes are 10,000 and 200,000 pages (about 2 hours on 2 cores).
    "memory": ["--sizes", "2000,10000"],
    "near_redis": ["--docs", "20000"],
}


def main(argv: list[str]) -> int:
    names = argv or ORDER
    failed = []
    for name in names:
        script = HERE / f"bench_{name}.py"
        if not script.exists():
            print(f"== {name}: no bench/{script.name} (skipped)")
            continue
        shown = " ".join([str(script.relative_to(HERE.parent)), *ARGS.get(name, [])])
        print(f"== {name}: {sys.executable} {shown}", flush=True)
        started = time.monotonic()
        cmd = [sys.executable, str(script), *ARGS.get(name, [])]
        rc = subprocess.run(cmd, check=False).returncode
        print(f"== {name}: exit {rc} after {time.monotonic() - started:.0f} s\n", flush=True)
        if rc != 0:
            failed.append(name)
    if failed:
        print("failed: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
