"""``trawl serve``: the search API, the search page and the OpenAPI document over a crawl."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trawl.cli._place import add_place_arguments, fleet_place

if TYPE_CHECKING:
    from trawl.api._routes import RouteSet
    from trawl.api.guard import Guard


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the search API and search page over a crawl's data directory",
        description="Serve GET /api/v1/search, the search page at /, the crawl API and "
        "dashboard (/v1/crawls, /crawls) and the OpenAPI document at /api/v1/openapi.json "
        "over every crawl in DIR: DIR's own (trawl crawl --data DIR, shown as crawl main) "
        "and those started through the API (DIR/crawls/ID), searched as one index. DIR "
        "is made (mode 0700) if missing. Several trawl serve processes may serve one DIR "
        "(behind a load balancer): one manages the crawls, the others answer reads and "
        "take over when it stops (GET /healthz says which). Binds to "
        "127.0.0.1 unless --host says otherwise; --port 0 takes a free port. The "
        "address is printed once the server listens. Ctrl-C or SIGTERM stops it. "
        "Requests must name one of the server's host names (Host header; against DNS "
        "rebinding); off loopback, reads need a token too.",
    )
    add_place_arguments(
        p,
        data_help="the data directory (with --redis: the local one holding the fleet's "
        "index, as an index-role worker or `trawl index --redis` keeps it)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080; 0: a free one)")
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name clients use for this server, answered besides localhost, "
        "127.0.0.1, ::1 and the bind address (repeatable; .example.org: the name and "
        "every name below it; also TRAWL_ALLOWED_HOSTS, comma-separated). Requests "
        "naming another host get 421",
    )
    reads = p.add_mutually_exclusive_group()
    reads.add_argument(
        "--require-read-token",
        action="store_true",
        help="reads need a token even on a loopback bind (the default off loopback): "
        "TRAWL_READ_TOKEN, else DIR/read-token (made and printed on first use); the "
        "control token works too",
    )
    reads.add_argument(
        "--open-reads",
        action="store_true",
        help="reads need no token even off loopback (a public search site); control "
        "still needs the control token",
    )
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
    p.add_argument(
        "--politeness-dir",
        metavar="DIR",
        help="the host leases all crawls started through the API share (one request in "
        "flight per host, the largest delay any asks; default DIR/hosts; also "
        "TRAWL_POLITENESS_DIR; give the same directory as your `trawl crawl`s to share "
        "with them; none: each crawl alone)",
    )
    p.set_defaults(handler=_serve)


def _guard(args: argparse.Namespace, data: Path) -> Guard:
    """The Host names and the read token, from the options; ValueError if one is bad."""
    from trawl.api.guard import READ_TOKEN_FILE, Guard, HostAllowlist, is_loopback_bind
    from trawl.api.guard import load_token as load

    env = [n for n in os.environ.get("TRAWL_ALLOWED_HOSTS", "").split(",") if n.strip()]
    try:
        hosts = HostAllowlist.for_bind(args.host, [*args.allowed_host, *env])
    except ValueError as exc:
        raise ValueError(f"--allowed-host or TRAWL_ALLOWED_HOSTS: {exc}") from None
    loopback = is_loopback_bind(args.host)
    if not loopback:
        print(f"trawl serve: answering for the host names {', '.join(hosts.names())}")
    token: str | None = None
    if args.require_read_token or not (loopback or args.open_reads):
        path = data / READ_TOKEN_FILE
        token, new = load(path, os.environ.get("TRAWL_READ_TOKEN"))
        if new:
            print(f"trawl serve: read token (shown once; kept in {path}): {token}")
        print(
            "trawl serve: reads need a token (Authorization: Bearer, or the password of "
            "the browser's login prompt): the read token or the control token"
        )
    elif not loopback:
        print(f"trawl serve: reads are open to anyone who reaches {args.host} (--open-reads)")
    return Guard(hosts, read_token=token)


def _serve(args: argparse.Namespace) -> int:
    from trawl.api.app import create_app
    from trawl.api.server import serve
    from trawl.config import parse_network
    from trawl.errors import ConfigError, StorageError

    if args.data is None:
        print("trawl serve: --data DIR is needed", file=sys.stderr)
        return 2
    data: Path = args.data
    if not data.is_dir():
        try:
            data.mkdir(mode=0o700, parents=True)
        except OSError as exc:
            print(f"trawl serve: cannot make the data directory {data}: {exc}", file=sys.stderr)
            return 2
        print(f"trawl serve: made the data directory {data} (empty: crawls go in it)")
    if not 0 <= args.port <= 65535:
        print(f"trawl serve: --port {args.port} is not a port", file=sys.stderr)
        return 2
    try:
        networks = [parse_network(n) for n in args.allow_network]
    except ConfigError as exc:
        print(f"trawl serve: --allow-network: {exc}", file=sys.stderr)
        return 2
    try:
        guard = _guard(args, data)
    except (ValueError, OSError) as exc:
        print(f"trawl serve: {exc}", file=sys.stderr)
        return 2
    if args.politeness_dir is not None:
        # Read by the service's crawl manager, and inherited by every crawl it starts.
        os.environ["TRAWL_POLITENESS_DIR"] = args.politeness_dir
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s")
    if not (data / "index").is_dir() and not (data / "crawls").is_dir():
        print(
            f"trawl serve: no crawl in {data} yet; search answers 503 until a crawl "
            "writes an index (trawl crawl --data DIR, or POST /v1/crawls)"
        )

    def ready(url: str) -> None:
        print(f"trawl serve: listening on {url}  (API: {url}api/v1/search?query=...)", flush=True)

    try:
        sets = _route_sets(args, data, networks)
    except (ConfigError, StorageError) as exc:
        print(f"trawl serve: {exc}", file=sys.stderr)
        return 2
    try:
        app = create_app(data, route_sets=sets, guard=guard)
        asyncio.run(serve(app, args.host, args.port, on_ready=ready))
    except OSError as exc:
        print(f"trawl serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    print("trawl serve: stopped", flush=True)
    return 0


def _route_sets(args: argparse.Namespace, data: Path, networks: list[Any]) -> list[RouteSet]:
    """The one-machine service over ``data``, or (``--redis``) the fleet's read routes."""
    from trawl.api.app import default_route_sets, fleet_route_sets
    from trawl.cli._fleet import saved_config
    from trawl.config_load import load_config

    place = fleet_place(args)
    if place is None:
        return default_route_sets(data, allow_networks=networks)
    saved, _blobs = saved_config(place)  # the place finds its logs itself
    config = load_config(overrides={**saved, "data_dir": data})
    print(f"trawl serve: the fleet's crawl {place}; its index in {data}/index")
    return fleet_route_sets(data, place, config)
