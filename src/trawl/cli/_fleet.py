"""``trawl worker``, and ``trawl crawl --redis``: one crawl in Redis, many workers.

The crawl (its config, seeds, frontier, pages, queues) lives in Redis; its WARC, text
and event logs in a blob store (an ``s3://`` bucket, or a directory every worker
can reach). A worker holds nothing of its own that matters: it reads the config from
Redis, works under its own writer id, and may die at any moment.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from trawl.cli._place import add_place_arguments
from trawl.cli._run import EXIT_DISK_FULL
from trawl.config import CrawlConfig, config_json, load_config
from trawl.errors import ConfigError, DiskFullError, SessionLostError, StorageError
from trawl.models import UrlStatus
from trawl.roles import ALL_ROLES, Role
from trawl.storage.base import CrawlStore
from trawl.storage.place import BLOBS_META, CrawlPlace

ROLES = {
    "fetch": frozenset({Role.FETCH}),
    "parse": frozenset({Role.PARSE}),
    "index": frozenset({Role.INDEX}),
    "fetch+parse": frozenset({Role.FETCH, Role.PARSE}),
    "all": ALL_ROLES,
}


def register(sub: argparse._SubParsersAction[Any]) -> None:
    w = sub.add_parser(
        "worker",
        help="work on a crawl kept in Redis (any number of workers, joining at any time)",
        description="A stateless worker of a crawl submitted with `trawl crawl --redis`: "
        "it reads the crawl's config from Redis and fetches, parses or indexes until the "
        "crawl is done or it is stopped (Ctrl-C/SIGTERM gives its leases back). A worker "
        "killed outright loses nothing: its leases expire and its work is redone.",
    )
    add_place_arguments(w, data_help="local scratch (spool, index); default a temp dir")
    w.add_argument(
        "--role",
        choices=sorted(ROLES),
        default="fetch+parse",
        help="what this worker does (default fetch+parse; run one index worker with a "
        "lasting --data for the search index; all = the three)",
    )
    w.add_argument("--concurrency", type=int, metavar="N", help="fetches in flight")
    w.add_argument("--parse-workers", type=int, metavar="N", help="parse processes")
    w.add_argument(
        "--session-ttl",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="a worker not heard from this long is dead and its work goes to the others "
        "(default 30; it beats at every commit)",
    )
    w.add_argument(
        "--wait",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="wait this long for the crawl to be submitted (default 300)",
    )
    w.add_argument(
        "--wait-replicas",
        type=int,
        default=0,
        metavar="N",
        help="each commit waits until N replicas of every Redis primary hold it (1 on a "
        "Cluster with replicas: a failover then loses no acknowledged work)",
    )
    w.add_argument("--quiet", action="store_true", help="no progress, only the summary")
    w.add_argument("--progress-interval", type=float, metavar="SECONDS")
    w.set_defaults(handler=_worker)


# A worker that loses more than MAX_LOST sessions within LOST_WINDOW seconds stops.
MAX_LOST = 3
LOST_WINDOW = 600.0


def worker_id() -> str:
    """A name no other worker has, now or later (host, pid, random)."""
    host = "".join(c if c.isalnum() else "_" for c in socket.gethostname())[:24] or "host"
    return f"{host}.{os.getpid()}.{secrets.token_hex(3)}"


def saved_config(place: CrawlPlace) -> tuple[dict[str, Any], str | None]:
    reader = place.reader()
    try:
        raw, blobs = reader.meta("config"), reader.meta(BLOBS_META)
    finally:
        reader.close()
    if raw is None:
        raise ConfigError(f"no crawl {place.crawl!r} in {place.redis}: submit one first")
    """The crawl's config as submitted (without its seeds), and where its logs live."""
    saved: dict[str, Any] = orjson.loads(raw)
    saved.pop("seeds", None)  # in the frontier already
    return saved, blobs


def _wait_for_crawl(place: CrawlPlace, seconds: float) -> tuple[dict[str, Any], str | None]:
    """The crawl's saved config, once it has been submitted (a fleet may start first)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return saved_config(place)
        except ConfigError:
            if time.monotonic() >= deadline:
                raise
        time.sleep(0.5)


def open_fleet_store(
    config: CrawlConfig,
    place: CrawlPlace,
    worker: str,
    *,
    session_ttl: float = 30.0,
    wait_replicas: int = 0,
) -> CrawlStore:
    from trawl.storage.open import open_redis_store

    assert place.redis is not None
    return open_redis_store(
        place.redis,
        place.crawl,
        worker=worker,
        max_per_host=config.max_per_host or None,
        lease_seconds=config.timeouts.total * 2 + 60,
        session_ttl=session_ttl,
        wait_replicas=wait_replicas,
    )


def _worker(args: argparse.Namespace) -> int:
    from trawl.cli._run import run_and_report
    from trawl.crawl import Crawl

    if args.redis is None:
        print("trawl worker: --redis URL is required", file=sys.stderr)
        return 2
    place = CrawlPlace(redis=args.redis, crawl=args.crawl_id, blobs=args.blobs)
    scratch = args.data or Path(tempfile.mkdtemp(prefix="trawl-worker-"))
    wid = worker_id()
    try:
        saved, blobs_where = _wait_for_crawl(place, args.wait)
        saved["data_dir"] = scratch
        for key, value in (
            ("max_in_flight", args.concurrency),
            ("parse_workers", args.parse_workers),
        ):
            if value is not None:
                saved[key] = value
        config = load_config(overrides=saved)
        blobs = place.blob_store(where=args.blobs or blobs_where, spool=scratch / "spool")
        store = open_fleet_store(
            config, place, wid, session_ttl=args.session_ttl, wait_replicas=args.wait_replicas
        )
        crawl = Crawl(config, store=store, blobs=blobs, roles=ROLES[args.role], writer=wid)
    except DiskFullError as exc:
        print(f"trawl worker: {exc}", file=sys.stderr)
        return EXIT_DISK_FULL
    except (ConfigError, StorageError) as exc:
        print(f"trawl worker: {exc}", file=sys.stderr)
        return 2
    print(f"trawl worker {wid}: {args.role} on {place}", file=sys.stderr)
    lost: list[float] = []
    while True:
        try:
            code = run_and_report(crawl, quiet=args.quiet, interval=args.progress_interval)
            break
        except SessionLostError as exc:
            # Silent too long (a pause, a failover): the others took over its work. A
            # worker holds nothing, so it goes on under a new session and writer id,
            # unless it keeps losing them (then something is wrong with this machine).
            now = time.monotonic()
            lost = [t for t in lost if now - t < LOST_WINDOW] + [now]
            if len(lost) > MAX_LOST:
                print(f"trawl worker {wid}: {exc}; lost {len(lost)} sessions", file=sys.stderr)
                return 1
            old, wid = wid, worker_id()
            print(f"trawl worker {old}: {exc}; going on as {wid}", file=sys.stderr)
            try:
                store = open_fleet_store(
                    config, place, wid, session_ttl=args.session_ttl,
                    wait_replicas=args.wait_replicas,
                )  # fmt: skip
                crawl = Crawl(config, store=store, blobs=blobs, roles=ROLES[args.role], writer=wid)
            except StorageError as reopen:
                print(f"trawl worker {wid}: {reopen}", file=sys.stderr)
                return 1
        except StorageError as exc:  # e.g. a commit the replicas did not acknowledge
            print(f"trawl worker {wid}: {exc}", file=sys.stderr)
            return 1
    # What this worker asked of Redis (the fleet bench adds them up per page).
    trips, commands = getattr(store, "round_trips", None), getattr(store, "commands", None)
    if trips is not None:
        print(f"redis: {trips} round trips, {commands} commands", file=sys.stderr)
    return code


def follow(place: CrawlPlace, *, interval: float, quiet: bool) -> int:
    """Show the fleet's progress until the crawl is done (nothing queued, leased,
    waiting or unparsed); 130 if interrupted."""
    # One reader throughout: a cluster client learns every node, so it rides out a
    # failover of the node it was first pointed at.
    import redis

    reader = place.reader()
    try:
        while True:
            try:
                s = reader.stats()
            except redis.RedisError as exc:  # a failover under way: ask again
                print(f"waiting for Redis: {exc}", file=sys.stderr)
                time.sleep(interval)
                continue
            known: int = sum(s.urls.values())
            active = s.urls.get(UrlStatus.QUEUED, 0) + s.urls.get(UrlStatus.IN_FLIGHT, 0)
            waiting = s.urls.get(UrlStatus.WAITING, 0)
            if not quiet:
                print(
                    f"{known:,} URLs, {s.urls.get(UrlStatus.PARSED, 0):,} parsed, "
                    f"{s.documents:,} documents, {active:,} to fetch, {waiting:,} waiting, "
                    f"{s.parse_backlog:,} to parse",
                    file=sys.stderr,
                )
            if known and active == 0 and waiting == 0 and s.parse_backlog == 0:
                return 0
            time.sleep(interval)
    except KeyboardInterrupt:
        return 130
    finally:
        reader.close()


def submit_and_run(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """``trawl crawl --redis``: submit (or resume) the crawl, then work on it here
    (``--no-worker``: only submit and follow the fleet)."""
    from trawl.cli._run import run_and_report
    from trawl.crawl import Crawl

    place = CrawlPlace(redis=args.redis, crawl=args.crawl_id, blobs=args.blobs)
    scratch = args.data or Path(tempfile.mkdtemp(prefix="trawl-crawl-"))
    try:
        try:
            saved, saved_blobs = saved_config(place)
        except ConfigError:
            saved, saved_blobs = {}, None
        blobs_where = args.blobs or saved_blobs or (str(args.data.resolve()) if args.data else None)
        if blobs_where is None:
            raise ConfigError("--redis needs --blobs s3://BUCKET/PREFIX (or --data DIR)")
        settings = {**saved, **{k: v for k, v in overrides.items() if v is not None}}
        settings["data_dir"] = scratch
        config = load_config(file=args.config, overrides=settings)
        if not config.seeds and not saved:
            raise ConfigError("no seeds: give SEED arguments or --seeds FILE")
        wid = worker_id()
        blobs = place.blob_store(where=blobs_where, spool=scratch / "spool")
        store = open_fleet_store(config, place, wid)
        # Without a worker here, only the parse role's side: it admits the seeds.
        roles = ROLES["parse"] if args.no_worker else ROLES["all"]
        crawl = Crawl(config, store=store, blobs=blobs, roles=roles, writer=wid)
        # The seeds are in the frontier before the config is in Redis: a worker that
        # finds the crawl finds its work (else it could see nothing to do, and end).
        crawl.add_seeds(list(config.seeds))
        store.meta.set("config", config_json(config))
        store.meta.set(BLOBS_META, blobs_where)
        crawl.commit()
    except (ConfigError, StorageError) as exc:
        print(f"trawl crawl: {exc}", file=sys.stderr)
        return 2
    if not args.no_worker:
        return run_and_report(crawl, quiet=args.quiet, interval=args.progress_interval)
    crawl.close()
    print(f"submitted crawl {place.crawl!r} to {args.redis}; following it", file=sys.stderr)
    return follow(place, interval=args.progress_interval or 2.0, quiet=args.quiet)
