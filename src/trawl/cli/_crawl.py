"""``trawl crawl`` and ``trawl stats``."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from trawl.cli._place import add_place_arguments, place_of
from trawl.cli._run import EXIT_DISK_FULL, disk_full_message, run_and_report
from trawl.config import (
    Timeouts,
    load_config,
    parse_limit,
    parse_network,
    parse_resolve,
    parse_size,
    read_resolve_file,
)
from trawl.errors import ConfigError, DiskFullError, StorageError
from trawl.stats import read_stats, url_states
from trawl.storage.open import has_crawl

if TYPE_CHECKING:
    pass


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "crawl",
        help="crawl from seed URLs into a data directory (resumes if it exists)",
        description="Crawl politely from seed URLs until the scope is exhausted or a limit "
        "is hit. Running the same command again, or --resume DIR, continues a crawl.",
        epilog="Exit status: 0 done or a limit reached, 2 bad arguments or an unusable "
        f"data directory, {EXIT_DISK_FULL} disk full or less free space than "
        "--min-free-space (free space and run the same command again), 130 interrupted.",
    )
    p.add_argument("seeds", nargs="*", metavar="SEED", help="seed URLs")
    p.add_argument("--seeds", dest="seeds_file", type=Path, help="file with one seed per line")
    p.add_argument("--data", type=Path, help="data directory (state, WARC, text)")
    p.add_argument("--resume", type=Path, metavar="DIR", help="continue the crawl in DIR")
    p.add_argument("--config", type=Path, help="TOML config file ([crawl] table)")
    p.add_argument("--agent", help="product token (robots.txt, User-Agent); default trawl")
    p.add_argument("--contact", help="contact URL put in the User-Agent")
    p.add_argument("--purpose", choices=["search", "training"])
    p.add_argument("--delay", type=float, help="seconds between requests to a host (1)")
    p.add_argument("--max-pages", type=int)
    p.add_argument("--max-depth", type=int)
    p.add_argument(
        "--max-per-host",
        type=_limit,
        metavar="N",
        help="URLs admitted per host (default 100000; 0 or none: no limit)",
    )
    p.add_argument(
        "--max-links-per-page",
        type=_limit,
        metavar="N",
        help="links taken from one page, the rest counted (default 5000; 0 or none: no limit)",
    )
    p.add_argument("--max-duration", type=float, metavar="SECONDS")
    p.add_argument(
        "--max-in-flight", "--concurrency", type=int, help="requests in flight across hosts"
    )
    p.add_argument("--scope", choices=["host", "domain", "any", "allowlist"])
    p.add_argument("--allow-host", action="append", default=[], help="for --scope allowlist")
    p.add_argument(
        "--allow-network",
        action="append",
        default=[],
        metavar="CIDR",
        help="let the crawler reach this network (e.g. 127.0.0.0/8 for a local web)",
    )
    p.add_argument("--resolve", action="append", default=[], metavar="HOST=IP")
    p.add_argument("--resolve-file", type=Path, help="file of HOST=IP lines")
    p.add_argument(
        "--recrawl",
        type=float,
        metavar="SECONDS",
        help="revisit pages after this long (adaptive; conditional requests); the crawl "
        "then runs until stopped or --max-duration",
    )
    p.add_argument("--strip-tracking", action="store_true", default=None)
    p.add_argument(
        "--quality-filter",
        choices=["none", "gopher"],
        help="drop documents failing these quality rules (default none)",
    )
    p.add_argument(
        "--min-free-space",
        type=_size,
        metavar="SIZE",
        help="stop cleanly when the data directory's disk has less free space than this "
        "(default 256M; 0: no reserve)",
    )
    p.add_argument("--parse-workers", type=int)
    p.add_argument(
        "--redis",
        metavar="URL",
        help="keep the crawl in Redis (redis:// or redis+cluster://) for `trawl worker`s",
    )
    p.add_argument("--crawl-id", default="main", metavar="ID", help="the crawl's id in Redis")
    p.add_argument(
        "--blobs", metavar="URL", help="with --redis: s3://BUCKET/PREFIX or a shared directory"
    )
    p.add_argument(
        "--no-worker", action="store_true", help="with --redis: only submit and follow the fleet"
    )
    p.add_argument("--timeout", type=float, help="total seconds per fetch")
    p.add_argument("--quiet", action="store_true", help="no progress, only the summary")
    p.add_argument(
        "--progress-interval",
        type=float,
        metavar="SECONDS",
        help="seconds between progress lines (default 0.5 on a terminal, 10 otherwise)",
    )
    p.set_defaults(handler=_crawl)

    s = sub.add_parser("stats", help="progress and counts of a crawl (running or not)")
    add_place_arguments(s, data_help="the crawl's data directory (or --redis)")
    s.add_argument("--json", action="store_true")
    s.add_argument(
        "--urls",
        nargs="?",
        const="all",
        metavar="STATUS",
        help="list URLs with status and reason (all, or one status: failed, skipped, ...)",
    )
    s.set_defaults(handler=_stats)


def _limit(text: str) -> int:
    try:
        value = parse_limit(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text}")
    return value


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _overrides(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    seeds = list(args.seeds)
    if args.seeds_file is not None:
        try:
            lines = args.seeds_file.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigError(f"cannot read seeds file: {exc}") from exc
        seeds += [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    resolve: dict[str, str] = {}
    if args.resolve_file is not None:
        resolve.update(read_resolve_file(args.resolve_file))
    resolve.update(parse_resolve(args.resolve))
    out: dict[str, Any] = {
        "data_dir": data_dir,
        "seeds": tuple(seeds) or None,
        "agent": args.agent,
        "contact": args.contact,
        "purpose": args.purpose,
        "delay": args.delay,
        "max_pages": args.max_pages,
        "max_depth": args.max_depth,
        "max_per_host": args.max_per_host,
        "max_links_per_page": args.max_links_per_page,
        "max_duration": args.max_duration,
        "max_in_flight": args.max_in_flight,
        "scope": args.scope,
        "allowed_hosts": tuple(args.allow_host) or None,
        "allow_networks": tuple(parse_network(n) for n in args.allow_network) or None,
        "resolve": resolve or None,
        "strip_tracking": args.strip_tracking,
        "parse_workers": args.parse_workers,
        "quality": args.quality_filter,
        "recrawl": args.recrawl,
        "min_free_space": args.min_free_space,
    }
    if args.timeout is not None:
        out["timeouts"] = Timeouts(
            connect=min(10.0, args.timeout), first_byte=args.timeout, total=args.timeout
        )
    return out


def _saved_config(data_dir: Path) -> dict[str, Any]:
    """The settings a crawl was started with, so --resume can use them again."""
    from trawl.stats import read_meta

    raw = read_meta(data_dir, "config")
    if raw is None:
        return {}
    saved: dict[str, Any] = orjson.loads(raw)
    saved.pop("seeds", None)  # seeds are in the frontier already
    return saved


def _crawl(args: argparse.Namespace) -> int:
    from trawl.crawl import Crawl

    if args.redis is not None:
        from trawl.cli._fleet import submit_and_run

        try:
            return submit_and_run(args, _overrides(args, args.data or Path(".")))
        except ConfigError as exc:
            print(f"trawl crawl: {exc}", file=sys.stderr)
            return 2
    data_dir = args.resume or args.data
    if data_dir is None:
        print("trawl crawl: --data DIR (or --resume DIR) is required", file=sys.stderr)
        return 2
    try:
        base = _saved_config(data_dir) if has_crawl(data_dir) else {}
        overrides = {
            **base,
            **{k: v for k, v in _overrides(args, data_dir).items() if v is not None},
        }
        config = load_config(file=args.config, overrides=overrides)
        if not config.seeds and not has_crawl(data_dir):
            raise ConfigError("no seeds: give SEED arguments or --seeds FILE")
        crawl = Crawl(config)
    except DiskFullError as exc:
        print(disk_full_message(exc), file=sys.stderr)
        return EXIT_DISK_FULL
    except (ConfigError, StorageError) as exc:
        print(f"trawl crawl: {exc}", file=sys.stderr)
        return 2
    return run_and_report(crawl, quiet=args.quiet, interval=args.progress_interval)


# Control characters (tab, the field separator, and newline among them) and the
# Unicode line separators: escaped, so each URL is one line of three fields.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_one(match: re.Match[str]) -> str:
    char = match[0]
    code = ord(char)
    return _ESCAPES.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def _escape(text: str) -> str:
    return _CONTROL.sub(_escape_one, text)


def _stats(args: argparse.Namespace) -> int:
    try:
        where = place_of(args)
    except StorageError as exc:
        print(f"trawl stats: {exc} (--data DIR or --redis URL)", file=sys.stderr)
        return 2
    if args.urls is not None:
        try:
            states = url_states(where, status=None if args.urls == "all" else args.urls)
        except StorageError as exc:
            print(f"trawl stats: {exc}", file=sys.stderr)
            return 2
        for url, (status, reason) in sorted(states.items()):
            print(f"{status}\t{_escape(reason or '')}\t{_escape(url)}")
        return 0
    try:
        stats = read_stats(where)
    except StorageError as exc:
        print(f"trawl stats: {exc}", file=sys.stderr)
        return 2
    if args.json:
        sys.stdout.write(orjson.dumps(stats, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    for key, value in stats.items():
        if isinstance(value, dict):
            print(f"{key}:")
            for k, v in value.items():
                print(f"  {k:<28} {v:,}" if isinstance(v, int) else f"  {k:<28} {v}")
        else:
            print(f"{key:<30} {value:,}" if isinstance(value, int) else f"{key:<30} {value}")
    return 0
