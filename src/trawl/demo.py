"""``make demo``: serve the shipped sample web on loopback and crawl it with the defaults.

    python -m trawl.demo [--hosts 30] [--pages 100] [--data demo-data] [--delay 0.2]
                         [--search-port 8080] [--no-serve]

The sample web is generated deterministically (trawl.testing.sampleweb) and served by
a child process on 127.0.0.1; the crawler reaches its host names through its own
resolver override and is allowed onto loopback explicitly, as a user would do.
After the crawl (whose close indexes what it stored), the search page is served on
127.0.0.1 (``search: http://127.0.0.1:PORT/``) until Ctrl-C; ``--no-serve`` ends the
demo after the crawl instead.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from trawl.config import CrawlConfig, Timeouts
from trawl.config_load import read_resolve_file


def _start_sample_web(
    hosts: int, pages: int, port: int, resolve_file: Path
) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "trawl.testing.sampleweb",
            "serve",
            "--hosts",
            str(hosts),
            "--pages",
            str(pages),
            "--resolve-file",
            str(resolve_file),
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    seeds: list[str] = []
    deadline = time.monotonic() + 60
    while len(seeds) < hosts and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("http"):
            seeds.append(line.strip())
    if len(seeds) < hosts:
        proc.terminate()
        raise SystemExit("the sample web did not start")
    return proc, seeds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trawl.demo", description=__doc__)
    parser.add_argument("--hosts", type=int, default=30)
    parser.add_argument("--pages", type=int, default=100, help="pages per host")
    parser.add_argument("--data", type=Path, default=Path("demo-data"))
    parser.add_argument(
        "--delay", type=float, default=0.2, help="seconds between requests to a host"
    )
    parser.add_argument(
        "--max-duration",
        type=float,
        default=90.0,
        help="stop the crawl after this many seconds (one host asks for Crawl-delay: 2)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=18080,
        help="loopback port of the sample web (fixed, so --keep works)",
    )
    parser.add_argument("--keep", action="store_true", help="resume the crawl in --data if present")
    parser.add_argument(
        "--search-port",
        type=int,
        default=8080,
        help="loopback port of the search page (a free one if it is taken; 0: any free one)",
    )
    parser.add_argument(
        "--no-serve", action="store_true", help="end after the crawl; do not serve the search page"
    )
    args = parser.parse_args(argv)

    from trawl.cli._run import LateInterrupts, _run
    from trawl.crawl import Crawl
    from trawl.progress import ProgressReporter

    if args.data.exists() and not args.keep:
        shutil.rmtree(args.data)
    args.data.mkdir(parents=True, exist_ok=True)
    resolve_file = args.data / "resolve.txt"
    print(f"sample web: {args.hosts} hosts x {args.pages} pages, served on 127.0.0.1")
    server, seeds = _start_sample_web(args.hosts, args.pages, args.port, resolve_file)
    late = LateInterrupts()
    try:
        config = CrawlConfig(
            data_dir=args.data,
            seeds=tuple(seeds),
            delay=args.delay,
            scope="allowlist",
            allowed_hosts=("sample",),
            allow_networks=(ipaddress.ip_network("127.0.0.0/8"),),
            resolve=read_resolve_file(resolve_file),
            timeouts=Timeouts(connect=5.0, first_byte=15.0, total=30.0),
            parse_workers=max(1, os.cpu_count() or 1),
            max_duration=args.max_duration or None,
        )
        print(f"crawling {len(seeds)} seeds into {args.data}/ (delay {args.delay}s per host)")
        crawl = Crawl(config)
        reporter = ProgressReporter(sys.stdout)
        try:
            summary = asyncio.run(_run(crawl, reporter, late, quiet=False))
        finally:
            crawl.close()
        reporter.finish(summary)
        print(
            f"\nWARC files: {args.data / 'warc'}  (check: warcio check {args.data}/warc/*.warc.gz)"
        )
        print(f"text files: {args.data / 'text'}  (zcat {args.data}/text/*.jsonl.gz | head -c 600)")
        print(f"stats:      trawl stats --data {args.data}")
        if summary.stopped != "done":
            print(f"resume:     python -m trawl.demo --keep --data {args.data}")
    finally:
        server.terminate()
        server.wait(timeout=10)
    from trawl.demo_search import serve_search

    if late.count:  # Ctrl-C while the crawl closed: the user wants out, not a server
        return 130
    if args.no_serve:
        print(f"search:     trawl serve --data {args.data}")
        return 0
    return serve_search(args.data, args.search_port)


if __name__ == "__main__":
    sys.exit(main())
