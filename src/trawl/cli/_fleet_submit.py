"""``trawl crawl --redis``: submit (or resume) a crawl kept in Redis, then work on it
here or (``--no-worker``) follow the fleet until it is done."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path
from typing import Any

from trawl.cli._fleet import (
    ROLES,
    fleet_crawl,
    open_fleet_store,
    run_fleet,
    saved_config,
    scratch_for,
    worker_id,
)
from trawl.cli._run import LateInterrupts
from trawl.config_load import config_json, load_config
from trawl.errors import ConfigError, StorageError
from trawl.logs import setup_logging
from trawl.models import UrlStatus
from trawl.roles import Role
from trawl.storage.open import open_redis_host_leases
from trawl.storage.place import BLOBS_META, CrawlPlace

log = logging.getLogger("trawl.crawl")


def _say(text: str, *, message: str | None = None, **fields: Any) -> None:
    """A line on stderr: as it reads at a terminal, else a JSON log record (the
    ``trawl`` loggers, set up by the caller) with ``fields``."""
    if sys.stderr.isatty():
        print(text, file=sys.stderr)
    else:
        log.info(message or text, extra=fields)


def follow(place: CrawlPlace, *, interval: float, quiet: bool) -> int:
    """Show the fleet's progress until the crawl is done (nothing queued, leased,
    waiting or unparsed); 130 if interrupted."""
    # One reader throughout: a cluster client learns every node, so it rides out a
    # failover of the node it was first pointed at.
    import redis

    from trawl.storage.redis.reader import RedisCrawlReader

    assert place.redis is not None
    reader = RedisCrawlReader(place.redis, place.crawl)
    try:
        while True:
            try:
                s = reader.stats()
                finished = s.hosts_with_queued == 0 and reader.finished()
            except redis.RedisError as exc:  # a failover under way: ask again
                _say(f"waiting for Redis: {exc}")
                time.sleep(interval)
                continue
            known: int = sum(s.urls.values())
            active = s.urls.get(UrlStatus.QUEUED, 0) + s.urls.get(UrlStatus.IN_FLIGHT, 0)
            waiting = s.urls.get(UrlStatus.WAITING, 0)
            if not quiet:
                parsed = s.urls.get(UrlStatus.PARSED, 0)
                text = (
                    f"{known:,} URLs, {parsed:,} parsed, {s.documents:,} documents, "
                    f"{active:,} to fetch, {waiting:,} waiting, {s.parse_backlog:,} to parse"
                )
                _say(
                    text,
                    message="fleet progress",
                    known=known,
                    parsed=parsed,
                    documents=s.documents,
                    to_fetch=active,
                    waiting=waiting,
                    to_parse=s.parse_backlog,
                )
            if known and finished:  # from the indexes: the counts are statistics
                return 0
            time.sleep(interval)
    except KeyboardInterrupt:
        return 130
    finally:
        reader.close()


def submit_and_run(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """``trawl crawl --redis``: submit (or resume) the crawl, then work on it here
    (``--no-worker``: only submit and follow the fleet)."""
    # Without a worker here, only the parse role's side: it admits the seeds.
    roles = ROLES["parse"] if args.no_worker else ROLES["all"]
    with scratch_for(args.data, roles, "trawl-crawl-", "trawl crawl") as scratch:
        return _submit_and_run(args, overrides, roles, scratch)


def _submit_and_run(
    args: argparse.Namespace, overrides: dict[str, Any], roles: frozenset[Role], scratch: Path
) -> int:
    place = CrawlPlace(redis=args.redis, crawl=args.crawl_id, blobs=args.blobs)
    late = LateInterrupts()  # every signal heard; told twice, Redis is not waited for
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
        store = open_fleet_store(config, place, wid, give_up=late.told_twice)
        leases = open_redis_host_leases(args.redis, give_up=late.told_twice)
        crawl, waiter = fleet_crawl(config, store, blobs, roles=roles, writer=wid, leases=leases)
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
        return run_fleet(crawl, waiter, args, late, "trawl crawl")
    crawl.close()
    if not sys.stderr.isatty():
        setup_logging(sys.stderr, json=True)  # JSON lines, like a crawl run here
    _say(f"submitted crawl {place.crawl!r} to {args.redis}; following it")
    return follow(place, interval=args.progress_interval or 2.0, quiet=args.quiet)
