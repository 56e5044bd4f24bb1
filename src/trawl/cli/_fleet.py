"""``trawl worker``: one crawl in Redis, many workers (``_fleet_submit.py`` submits it).

The crawl (its config, seeds, frontier, pages, queues) lives in Redis; its WARC, text
and event logs in a blob store (an ``s3://`` bucket, or a directory every worker
can reach). A worker holds nothing of its own that matters: it reads the config from
Redis, works under its own writer id, and may die at any moment.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trawl.cli._place import add_place_arguments
from trawl.cli._run import EXIT_DISK_FULL, LateInterrupts
from trawl.config import CrawlConfig
from trawl.config_load import load_config, saved_settings
from trawl.errors import ConfigError, DiskFullError, SessionLostError, StorageError
from trawl.roles import ALL_ROLES, Role
from trawl.scratch import Scratch
from trawl.storage.base import CrawlStore, HostLeases
from trawl.storage.blobs import BlobStore
from trawl.storage.open import open_redis_host_leases
from trawl.storage.place import BLOBS_META, CrawlPlace
from trawl.storage.retry import never

if TYPE_CHECKING:
    from trawl.crawl import Crawl
    from trawl.frontier.idle import FleetWait

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
    add_place_arguments(
        w,
        data_help="local scratch (spool, index); default a temp dir, removed at exit "
        "(kept, and named, if it holds the index)",
    )
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
    """The crawl's config as submitted (without its seeds), and where its logs live."""
    reader = place.reader()
    try:
        raw, blobs = reader.meta("config"), reader.meta(BLOBS_META)
    finally:
        reader.close()
    if raw is None:
        raise ConfigError(f"no crawl {place.crawl!r} in {place.redis}: submit one first")
    return saved_settings(raw), blobs


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
    give_up: Callable[[], bool] = never,
) -> CrawlStore:
    from trawl.storage.open import open_redis_store

    assert place.redis is not None
    return open_redis_store(
        place.redis,
        place.crawl,
        worker=worker,
        max_per_host=config.max_per_host or None,
        lease_seconds=config.lease_seconds,
        session_ttl=session_ttl,
        wait_replicas=wait_replicas,
        give_up=give_up,
    )


def check_roles(config: CrawlConfig, roles: frozenset[Role]) -> None:
    """Refuse a worker that would have nothing to do (ConfigError)."""
    if roles == {Role.INDEX} and not config.index:
        raise ConfigError(
            "this crawl keeps no search index (submitted with --no-index): an index worker "
            "has nothing to do; build the index with trawl index --redis when it is done"
        )


def fleet_crawl(
    config: CrawlConfig,
    store: CrawlStore,
    blobs: BlobStore,
    *,
    roles: frozenset[Role],
    writer: str,
    leases: HostLeases | None,
) -> tuple[Crawl, FleetWait | None]:
    """A fleet worker's crawl, and (with the fetch role) how it waits for work without
    polling the schedule: close the waiter after the run."""
    from trawl.crawl import Crawl
    from trawl.frontier.idle import FleetWait

    signal = getattr(store, "wake_signal", None)
    waiter = FleetWait(signal()) if signal is not None and Role.FETCH in roles else None
    crawl = Crawl(
        config, store=store, blobs=blobs, roles=roles, writer=writer, leases=leases, waiter=waiter
    )
    return crawl, waiter


def run_fleet(
    crawl: Crawl,
    waiter: FleetWait | None,
    args: argparse.Namespace,
    late: LateInterrupts,
    who: str,
) -> int:
    """Run ``crawl`` to its end (``run_and_report``). ``late`` counts every signal the
    process hears and is its Redis stores' ``give_up`` (``told_twice``): else each
    call to a Redis that does not answer waits out ``conn.OUTAGE``, and a process cut
    off from Redis could only be killed. Told twice, an error that ends the run ends
    the process (130), saying so: what it held is not committed, and its session and
    leases lapse for the others to take over, as a killed worker's do. A store's own
    errors (a lost session, a commit refused) are the caller's, as ever."""
    from trawl.cli._run import run_and_report

    try:
        return run_and_report(crawl, quiet=args.quiet, interval=args.progress_interval, late=late)
    except StorageError:
        raise
    except Exception as exc:
        if not late.told_twice():
            raise
        print(
            f"{who}: stopped as asked, Redis not answering ({exc}); "
            "its uncommitted work goes back to the crawl when its session lapses",
            file=sys.stderr,
        )
        return 130
    finally:
        if waiter is not None:
            waiter.close()


@contextlib.contextmanager
def scratch_for(data: Path | None, roles: frozenset[Role], prefix: str, who: str) -> Iterator[Path]:
    """Where a fleet process works: ``--data``, else a temporary folder, removed when
    it ends (or, killed, by the next process that makes one: ``Scratch``), unless the
    index is built in it: that one is kept, and named."""
    if data is not None:
        yield data
    elif Role.INDEX in roles:
        kept = Path(tempfile.mkdtemp(prefix=prefix))
        print(f"{who}: no --data: the index is kept under {kept}", file=sys.stderr)
        yield kept
    else:
        with Scratch(prefix) as own:
            yield own.path


def _worker(args: argparse.Namespace) -> int:
    if args.redis is None:
        print("trawl worker: --redis URL is required", file=sys.stderr)
        return 2
    with scratch_for(args.data, ROLES[args.role], "trawl-worker-", "trawl worker") as scratch:
        return _work(args, scratch)


def _work(args: argparse.Namespace, scratch: Path) -> int:
    place = CrawlPlace(redis=args.redis, crawl=args.crawl_id, blobs=args.blobs)
    wid = worker_id()
    # Every signal the worker hears (``run_fleet``): a Ctrl-C while a lost session
    # closes stops it too; told twice, its Redis stores wait for Redis no more.
    late = LateInterrupts()
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
        check_roles(config, ROLES[args.role])
        blobs = place.blob_store(where=args.blobs or blobs_where, spool=scratch / "spool")
        store = open_fleet_store(
            config,
            place,
            wid,
            session_ttl=args.session_ttl,
            wait_replicas=args.wait_replicas,
            give_up=late.told_twice,
        )
        # Shared with every crawl in this Redis, whatever its id (storage/redis/hostleases);
        # a killed worker's host leases lapse no later than its session.
        leases = open_redis_host_leases(
            args.redis, beat_ttl=args.session_ttl, give_up=late.told_twice
        )
        crawl, waiter = fleet_crawl(
            config, store, blobs, roles=ROLES[args.role], writer=wid, leases=leases
        )
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
            code = run_fleet(crawl, waiter, args, late, f"trawl worker {wid}")
            break
        except SessionLostError as exc:
            if late.count:
                print(f"trawl worker {wid}: {exc}; stopped as asked", file=sys.stderr)
                return 130
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
                    wait_replicas=args.wait_replicas, give_up=late.told_twice,
                )  # fmt: skip
                crawl, waiter = fleet_crawl(
                    config, store, blobs, roles=ROLES[args.role], writer=wid, leases=leases
                )
            except StorageError as reopen:
                print(f"trawl worker {wid}: {reopen}", file=sys.stderr)
                return 1
        except StorageError as exc:  # a commit the replicas did not acknowledge, an upload
            print(
                f"trawl worker {wid}: {exc}; what it had not committed goes back to the "
                "crawl when its session lapses",
                file=sys.stderr,
            )
            return 1
    # What this worker asked of Redis (the fleet bench adds them up per page).
    trips, commands = getattr(store, "round_trips", None), getattr(store, "commands", None)
    if trips is not None:
        print(f"redis: {trips} round trips, {commands} commands", file=sys.stderr)
    return code
