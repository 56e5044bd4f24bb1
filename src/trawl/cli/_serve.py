"""``trawl serve``: the search API, the search page and the OpenAPI document over a crawl."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the search API and search page over a crawl's data directory",
        description="Serve GET /api/v1/search, the search page at / and the OpenAPI "
        "document at /api/v1/openapi.json over the index in DIR/index. Binds to "
        "127.0.0.1 unless --host says otherwise; --port 0 takes a free port. The "
        "address is printed once the server listens. Ctrl-C or SIGTERM stops it.",
    )
    p.add_argument("--data", type=Path, required=True, metavar="DIR", help="the data directory")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080; 0: a free one)")
    p.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    from trawl.api.app import create_app
    from trawl.api.server import serve

    data: Path = args.data
    if not data.is_dir():
        print(f"trawl serve: no data directory {data}", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"trawl serve: --port {args.port} is not a port", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s")
    if not (data / "index").is_dir():
        print(
            f"trawl serve: no search index in {data}/index yet; "
            "search answers 503 until a crawl writes it"
        )

    def ready(url: str) -> None:
        print(f"trawl serve: listening on {url}  (API: {url}api/v1/search?query=...)", flush=True)

    try:
        asyncio.run(serve(create_app(data), args.host, args.port, on_ready=ready))
    except OSError as exc:
        print(f"trawl serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    print("trawl serve: stopped", flush=True)
    return 0
