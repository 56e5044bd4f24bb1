"""``trawl crawl`` and ``trawl stats``."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from trawl.cli._place import add_place_arguments, place_of
from trawl.cli._run import EXIT_DISK_FULL, disk_full_message, fail, run_and_report
from trawl.config import RENDER_MODES, Timeouts, parse_network
from trawl.config_load import (
    load_config,
    parse_limit,
    parse_resolve,
    parse_size,
    read_resolve_file,
    saved_settings,
)
from trawl.errors import ConfigError, DiskFullError, StorageError
from trawl.stats import read_stats, url_states
from trawl.storage.open import has_crawl
from trawl.storage.place import CrawlPlace

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
    p.add_argument(
        "--seeds",
        dest="seeds_file",
        type=Path,
        help="file with one seed per line: URL, or URL PRIORITY (a positive number, "
        "default 1; higher is fetched first in --priority opic)",
    )
    p.add_argument("--data", type=Path, help="data directory (state, WARC, text)")
    p.add_argument("--resume", type=Path, metavar="DIR", help="continue the crawl in DIR")
    p.add_argument("--config", type=Path, help="TOML config file ([crawl] table)")
    p.add_argument("--agent", help="product token (robots.txt, User-Agent); default trawl")
    p.add_argument("--contact", help="contact URL put in the User-Agent")
    p.add_argument("--purpose", choices=["search", "training"])
    p.add_argument("--delay", type=float, help="seconds between requests to a host (1)")
    p.add_argument(
        "--politeness-dir",
        metavar="DIR",
        help="host leases shared with every crawl using DIR: one request in flight per "
        "host and the largest delay any of them asks (default $XDG_STATE_HOME/trawl/hosts, "
        "i.e. every crawl of this user on this machine; also TRAWL_POLITENESS_DIR; "
        "none: this crawl alone)",
    )
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
        "--robots-patience",
        type=float,
        metavar="SECONDS",
        help="end the crawl when only URLs of hosts whose robots.txt is unreachable have "
        "been left this long; they stay queued for a resume (default 600)",
    )
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
    tracking = p.add_mutually_exclusive_group()
    tracking.add_argument(
        "--keep-tracking",
        dest="strip_tracking",
        action="store_false",
        default=None,
        help="keep known tracking parameters (utm_*, gclid, fbclid, ...; the list: "
        "`trawl url normalize --help`) in URLs; by default they are dropped before the "
        "seen check",
    )
    tracking.add_argument(
        "--strip-tracking",
        dest="strip_tracking",
        action="store_true",
        default=None,
        help="drop them (the default; for a crawl started with --keep-tracking)",
    )
    p.add_argument(
        "--no-equivalences",
        dest="equivalences",
        action="store_false",
        default=None,
        help="do not learn which spellings of a host's URLs serve the same page "
        "(parameters, /amp/, index.html, a trailing slash) nor rewrite URLs by them",
    )
    p.add_argument(
        "--no-defer-spellings",
        dest="defer_spellings",
        action="store_false",
        default=None,
        help="fetch a link that is probably another spelling of a URL its host has (by "
        "an equivalence still being learned) in its turn, not after the host's other URLs",
    )
    p.add_argument(
        "--equivalence-pages",
        type=int,
        metavar="N",
        help="distinct pages that must show an equivalence before it is applied (4)",
    )
    p.add_argument(
        "--equivalence-values",
        type=int,
        metavar="N",
        help="different values a parameter must be seen with, all the same page, before "
        "it is dropped whatever its value (3)",
    )
    p.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="REGEX",
        help="admit only URLs matching one of these regular expressions (searched in the "
        "normal-form URL; repeatable); seeds too",
    )
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="REGEX",
        help="refuse URLs matching this regular expression (repeatable; wins over --include)",
    )
    p.add_argument(
        "--sitemaps",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="read each host's sitemaps (robots.txt Sitemap lines, /sitemap.xml) for URLs "
        "(default on)",
    )
    p.add_argument(
        "--max-sitemaps-per-host",
        type=int,
        metavar="N",
        help="sitemap files read per host, index files included (default 200)",
    )
    p.add_argument(
        "--priority",
        choices=["opic", "depth"],
        help="what to fetch first: opic (default: pages many pages link to, by in-links "
        "found so far, host quality, depth, change history) or depth (breadth first)",
    )
    p.add_argument(
        "--no-link-graph",
        dest="link_graph",
        action="store_false",
        default=None,
        help="do not keep the link graph (for `trawl export --links`)",
    )
    p.add_argument(
        "--index",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="keep the search index up as pages are stored (default); --no-index: no "
        "search while crawling, less CPU a page, the pages left for `trawl index` or the "
        "next crawl with --index",
    )
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
    add_render_arguments(p)
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
    s.add_argument(
        "--host",
        metavar="HOST",
        help="one host: its schedule, robots.txt, errors and learned URL equivalences "
        "(HOST as the crawl names it: name, or name:port)",
    )
    s.set_defaults(handler=_stats)


def add_render_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "rendering",
        "pages that need JavaScript, in headless Chromium (pip install 'trawl[render]')",
    )
    g.add_argument(
        "--render",
        choices=RENDER_MODES,
        help="render pages in a browser: never (default), auto (pages that look like "
        "application shells, and hosts learned to need it) or always",
    )
    g.add_argument("--render-pages", type=int, metavar="N", help="pages rendered at once (2)")
    g.add_argument(
        "--render-deadline", type=float, metavar="SECONDS", help="time one render may take (20)"
    )
    g.add_argument(
        "--render-scrolls", type=int, metavar="N", help="scrolls for lazily loaded content (3)"
    )
    g.add_argument(
        "--render-memory",
        type=_size,
        metavar="SIZE",
        help="restart the browser when its processes' memory (PSS) passes this (default 1G)",
    )
    g.add_argument(
        "--render-host",
        action="append",
        default=[],
        metavar="HOST",
        help="another host whose scripts and API calls a rendered page may load "
        "(cdn.example, or .example for a domain); none by default",
    )
    g.add_argument(
        "--render-browser", metavar="PATH", help="the Chromium to drive (default /usr/bin/chromium)"
    )


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
        "politeness_dir": args.politeness_dir,
        "max_pages": args.max_pages,
        "max_depth": args.max_depth,
        "max_per_host": args.max_per_host,
        "max_links_per_page": args.max_links_per_page,
        "max_duration": args.max_duration,
        "robots_patience": args.robots_patience,
        "max_in_flight": args.max_in_flight,
        "scope": args.scope,
        "allowed_hosts": tuple(args.allow_host) or None,
        "allow_networks": tuple(parse_network(n) for n in args.allow_network) or None,
        "resolve": resolve or None,
        "strip_tracking": args.strip_tracking,
        "equivalences": args.equivalences,
        "equivalence_pages": args.equivalence_pages,
        "equivalence_values": args.equivalence_values,
        "defer_spellings": args.defer_spellings,
        "include": tuple(args.include) or None,
        "exclude": tuple(args.exclude) or None,
        "sitemaps": args.sitemaps,
        "max_sitemaps_per_host": args.max_sitemaps_per_host,
        "priority": args.priority,
        "link_graph": args.link_graph,
        "index": args.index,
        "parse_workers": args.parse_workers,
        "quality": args.quality_filter,
        "recrawl": args.recrawl,
        "min_free_space": args.min_free_space,
        "render": args.render,
        "render_pages": args.render_pages,
        "render_deadline": args.render_deadline,
        "render_scrolls": args.render_scrolls,
        "render_memory": args.render_memory,
        "render_hosts": tuple(args.render_host) or None,
        "render_browser": args.render_browser,
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
    saved = saved_settings(raw)
    saved.pop("politeness_dir", None)  # shared with the crawls of where it runs now
    return saved


def _crawl(args: argparse.Namespace) -> int:
    from trawl.crawl import Crawl

    if args.redis is not None:
        from trawl.cli._fleet_submit import submit_and_run

        try:
            return submit_and_run(args, _overrides(args, args.data or Path(".")))
        except ConfigError as exc:
            return fail(f"trawl crawl: {exc}", 2)
    data_dir = args.resume or args.data
    if data_dir is None:
        return fail("trawl crawl: --data DIR (or --resume DIR) is required", 2)
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
        return fail(disk_full_message(exc), EXIT_DISK_FULL)
    except (ConfigError, StorageError) as exc:
        return fail(f"trawl crawl: {exc}", 2)
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
    if args.host is not None:
        return _host_stats(where, args.host.strip().lower(), as_json=args.json)
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


def _host_stats(where: CrawlPlace, host: str, *, as_json: bool) -> int:
    """``trawl stats --host``: the API's host view (``GET /v1/hosts/{host}``)."""
    from trawl.service.reader import host_view
    from trawl.stats import read_meta

    try:
        raw = read_meta(where, "config")
        settings = saved_settings(raw) if raw is not None else {}
        config = load_config(env={}, overrides={**settings, "data_dir": Path(".")})
        view = host_view(where, host, config)
    except (StorageError, ConfigError) as exc:
        print(f"trawl stats: {exc}", file=sys.stderr)
        return 2
    if view is None:
        print(f"trawl stats: the crawl has not met {host}", file=sys.stderr)
        return 1
    if as_json:
        sys.stdout.write(orjson.dumps(view, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    rules = view.pop("equivalences")
    robots = view.pop("robots")
    errors = view.pop("errors")
    for key, value in view.items():
        if isinstance(value, dict):
            print(f"{key}:")
            for k, v in value.items():
                print(f"  {k:<28} {v:,}")
        else:
            print(f"{key:<30} {'-' if value is None else value}")
    for r in robots:
        print(f"robots.txt {r['origin']}: {r['outcome']} (HTTP {r['http_status']})")
    for e in errors:
        print(f"error {e['count']:>6,}  {_escape(e['reason'])}")
    print(f"url equivalences ({len(rules)}):")
    for r in rules:
        seen = f"{r['pages']} pages" + (f", {r['values']} values" if r["values"] else "")
        why = _escape(r["reason"] or "") if r["state"] == "refuted" else ""
        print(
            f"  {r['state']:<9} {_escape(r['rule']):<28} {seen:<20} "
            f"{r['rewrites']:>8,} respelled  {why}".rstrip()
        )
    return 0
