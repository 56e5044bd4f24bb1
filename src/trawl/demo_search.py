"""The search half of ``make demo``: serve the search page over the crawl's index.

The crawl's close already indexes the pages it stored and had not indexed yet, so
there is nothing to bring up to date here.
"""

from __future__ import annotations

import asyncio
import errno
import sys
from pathlib import Path


def serve_search(data: Path, port: int) -> int:
    """Serve the search page over ``data`` on 127.0.0.1 until Ctrl-C (or SIGTERM)."""
    from trawl.api.app import create_app
    from trawl.api.server import serve

    def ready(url: str) -> None:
        print(f"search:     {url}  (API: {url}api/v1/search?query=...; Ctrl-C stops)", flush=True)

    for attempt in (port, 0):
        try:
            asyncio.run(serve(create_app(data), "127.0.0.1", attempt, on_ready=ready))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE or attempt == 0:
                print(f"demo: cannot serve the search page: {exc}", file=sys.stderr)
                return 1
            print(f"port {port} is taken; serving on a free port instead")
            continue
        return 0
    return 1
