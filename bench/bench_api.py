"""The search API over HTTP: ``trawl serve`` under wrk, cached and uncached.

    python bench/bench_api.py [--pages 20000] [--duration 15] [--connections 16]
                              [--queries 1000] [--keep DIR]

The index is built as ``bench/bench_search.py`` builds it (its ``generate`` and
``index``: generated prose written as a crawl writes it, indexed through
``Indexer.index_pending``), or reused from ``--keep DIR``. ``trawl serve --data DIR
--port 0`` runs as a child process; wrk (one thread, ``--connections`` connections)
then asks for

- cached: one query, ``garden history``, over and over (the searcher's answer cache);
- uncached: a Lua script rotating through ``4 * --queries`` distinct queries (one
  word, several words, a phrase, a typo; ``bench_search.queries``), more than the
  server's cache of 1,024 answers holds, so each request runs the search.

Prints requests/s and latency p50/p99 of each, and the count of non-2xx answers.
Figures are printed, not asserted. Needs ``wrk`` (``make bench`` installs it).
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote_plus

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_search import generate, index, queries

CACHED_QUERY = "garden history"
_ADDRESS = re.compile(r"listening on (http://127\.0\.0\.1:\d+/)")

LUA = """
local paths = {}
for line in io.lines("%s") do paths[#paths + 1] = line end
local i = 0
request = function()
  i = i %% #paths + 1
  return wrk.format("GET", paths[i])
end
"""


def build(data: Path, pages: int) -> list[tuple[str, str, str]]:
    """(url, text, phrase) samples of the index in ``data``, building it if absent."""
    sample_file = data / "samples.txt"
    if (data / "index" / "meta.json").exists() and sample_file.exists():
        print(f"reusing the index in {data}")
        lines = sample_file.read_text().split("\x1e")
        return [(u, t, p) for u, t, p in (s.split("\x1f") for s in lines if s)]
    data.mkdir(parents=True, exist_ok=True)
    samples, _ = generate(data, pages)
    sample_file.write_text("\x1e".join("\x1f".join(s) for s in samples))
    index(data)
    return samples


def start_server(data: Path) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-m", "trawl", "serve", "--data", str(data), "--port", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if match := _ADDRESS.search(line):
            return proc, match.group(1)
    proc.kill()
    raise SystemExit("trawl serve did not print its address")


def stop_server(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wrk(label: str, url: str, args: argparse.Namespace, script: Path | None = None) -> None:
    cmd = ["wrk", "-t1", f"-c{args.connections}", f"-d{args.duration}s", "--latency"]
    if script is not None:
        cmd += ["-s", str(script)]
    cmd.append(url)
    print(f"{label}: {' '.join(cmd)}", flush=True)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M)
    p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M)
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors:.*", out)
    print(
        f"  {float(rps.group(1)) if rps else float('nan'):,.0f} req/s, "
        f"latency p50 {p50.group(1) if p50 else '?'}, p99 {p99.group(1) if p99 else '?'}; "
        f"non-2xx {bad.group(1) if bad else 0}" + (f"; {errors.group(0)}" if errors else ""),
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--duration", type=int, default=15, help="seconds of each wrk run")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--queries", type=int, default=1000, help="of each kind (uncached)")
    ap.add_argument("--keep", type=Path, help="build in DIR and keep it (reused if there)")
    args = ap.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("bench_api needs wrk (apt-get install wrk, or make bench)")
    tmp = Path(tempfile.mkdtemp(prefix="trawl-bench-api-"))
    data = args.keep or tmp
    try:
        samples = build(data, args.pages)
        qs = queries(samples, args.queries, random.Random(7))
        distinct = sorted({q for _kind, q, _t in qs})
        paths = tmp / "paths.txt"
        paths.write_text("".join(f"/api/v1/search?query={quote_plus(q)}\n" for q in distinct))
        script = tmp / "rotate.lua"
        script.write_text(LUA % paths)
        proc, base = start_server(data)
        try:
            cached = f"{base}api/v1/search?query={quote_plus(CACHED_QUERY)}"
            with urllib.request.urlopen(cached, timeout=30) as resp:  # fills the cache
                print(f"server {base}; {CACHED_QUERY!r}: HTTP {resp.status}", flush=True)
            wrk("cached (one query)", cached, args)
            wrk(f"uncached ({len(distinct):,} distinct queries)", base.rstrip("/"), args, script)
        finally:
            stop_server(proc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
