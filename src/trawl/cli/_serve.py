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
    p.add_argument(
        "--allow-network",
        action="append",
        default=[],
        metavar="CIDR",
        help="a private or loopback network crawls started through the API may reach "
        "(repeatable; e.g. 127.0.0.0/8 for a local test web). A crawl request may ask only "
        "for networks within these, and may resolve names only to public addresses or "
        "addresses within them. Default: none",
    )
    p.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    from trawl.api.app import create_app, default_route_sets
    from trawl.api.server import serve
    from trawl.config import parse_network
    from trawl.errors import ConfigError

    data: Path = args.data
    if not data.is_dir():
        print(f"trawl serve: no data directory {data}", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"trawl serve: --port {args.port} is not a port", file=sys.stderr)
        return 2
    try:
        networks = [parse_network(n) for n in args.allow_network]
    except ConfigError as exc:
        print(f"trawl serve: --allow-network: {exc}", file=sys.stderr)
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
        sets = default_route_sets(data, allow_networks=networks)
        app = create_app(data, route_sets=sets)
        asyncio.run(serve(app, args.host, args.port, on_ready=ready))
    except OSError as exc:
        print(f"trawl serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    print("trawl serve: stopped", flush=True)
    return 0
