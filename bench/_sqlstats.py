"""SQLite by statement: a second crawl of bench_profile's web with every statement timed.

The crawl process runs with ``bench/_sqltrace`` on ``PYTHONPATH`` (its
``sitecustomize`` times each ``execute``/``executemany`` in the calling thread), not
under py-spy. Printed: each statement's calls, rows (``executemany``), CPU-ms per page
and share of the crawl process's CPU. Figures are printed, never asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from bench import bench_crawl

TRACE_DIR = Path(__file__).resolve().parent / "_sqltrace"


def sql_profile(web: bench_crawl.Web, work: Path, *, top: int = 20) -> None:
    out = work / "sql.json"
    data = work / "trawl-data-sql"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TRACE_DIR), env.get("PYTHONPATH", "")) if p)
    env["TRAWL_SQLTRACE_OUT"] = str(out)
    cmd = bench_crawl.trawl_cmd(web, data, "--max-duration", "1800")
    print(f"\n$ TRAWL_SQLTRACE_OUT=... PYTHONPATH=bench/_sqltrace {bench_crawl.show_cmd(cmd)}")
    rc = subprocess.run(cmd, env=env, check=False).returncode
    if rc != 0 or not out.exists():
        print(f"SQLite by statement: the traced crawl exited {rc}, no figures")
        return
    stats, _ = bench_crawl.trawl_stats(data)
    pages = int(stats["http statuses"].get("200", 0)) or 1
    found = json.loads(out.read_text())
    cpu: float = found["cpu"]
    rows = sorted(found["statements"].items(), key=lambda kv: -kv[1][2])
    total = sum(v[2] for _, v in rows)
    print(
        f"SQLite by statement (crawl process, {pages:,} pages): {total:.2f} s of its "
        f"{cpu:.1f} CPU-s in statement calls ({100 * total / cpu:.1f} %), "
        f"{1000 * total / pages:.3f} ms/page; rows fetched afterwards not included"
    )
    print(f"  {'ms/page':>8} {'share':>6} {'calls':>8} {'rows':>8}  statement")
    for sql, (calls, n, seconds) in rows[:top]:
        print(
            f"  {1000 * seconds / pages:8.3f} {100 * seconds / cpu:5.1f}% {int(calls):8,} "
            f"{int(n):8,}  {sql[:110]}"
        )
