"""``trawl search`` and ``trawl index``."""

from __future__ import annotations

import argparse
import html
import re
import sys
from typing import TYPE_CHECKING, Any

import orjson

from trawl.cli._place import add_place_arguments, fleet_place
from trawl.errors import StorageError

if TYPE_CHECKING:
    from trawl.index.shard import IndexSpec

_MARK = re.compile(r"<mark>(.*?)</mark>", re.S)


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "search",
        help="search the pages a crawl stored (also while it runs)",
        description="Search the crawls of a data directory (its own, and those `trawl serve` "
        'started in it), ranked as one index. Words must all match; "a phrase" in quotes; '
        "a OR b; NOT a or -a; ( ) to group; site:example.org for a site and its "
        "subdomains. A misspelled word is corrected, and the answer says so.",
    )
    p.add_argument("query", metavar="QUERY", help="the query (quote it for the shell)")
    add_place_arguments(
        p, data_help="the crawl's data directory (with --redis: the one holding the index)"
    )
    p.add_argument(
        "--crawl",
        metavar="ID",
        help="search this crawl only (main: the directory's own; an id of GET /v1/crawls)",
    )
    p.add_argument("--limit", type=int, default=10, metavar="N", help="results per page (10)")
    p.add_argument("--page", type=int, default=1, metavar="N", help="page of results (1)")
    p.add_argument("--json", action="store_true", help="the answer as JSON")
    p.set_defaults(handler=_search)

    p = sub.add_parser(
        "index",
        help="rebuild the search index from the stored text",
        description="Rebuild DIR/index from the text records of the pages the crawl "
        "stored. A crawl keeps its index up by itself; this is for an index lost, "
        "damaged, made by an older trawl or left out (trawl crawl --no-index). "
        "Refused while a crawl runs on DIR. With --redis: DIR/index is built from what "
        "the fleet has committed, beside the running fleet (not while a worker writes "
        "that same index).",
    )
    add_place_arguments(
        p, data_help="the crawl's data directory (with --redis: where to build the index)"
    )
    p.add_argument(
        "--shards",
        type=int,
        metavar="N",
        help="split the index into N shards, searched in parallel and merged as one "
        "index (every writer and searcher follows the split from then on; 1 makes it "
        "whole again; default: keep the index as it is)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress, only the summary")
    p.set_defaults(handler=_index)


def _terminal_snippet(snippet: str, *, bold: bool) -> str:
    on, off = ("\x1b[1m", "\x1b[0m") if bold else ("[", "]")
    return html.unescape(_MARK.sub(lambda m: on + m.group(1) + off, snippet))


def _indexes(args: argparse.Namespace) -> list[IndexSpec]:
    """The indexes to search: the fleet's in DIR/index, or every crawl's in DIR."""
    from trawl.index.shard import IndexSpec
    from trawl.service.catalog import Catalog
    from trawl.service.manager import CrawlManager

    fleet = fleet_place(args)
    if fleet is not None:
        return [IndexSpec(fleet.crawl, args.data / "index", fleet.blob_store())]
    return Catalog(args.data, CrawlManager(args.data)).index_specs()


def _search(args: argparse.Namespace) -> int:
    from trawl.index import QueryError, Searcher
    from trawl.index.schema import index_exists

    if args.data is None:
        print("trawl search: --data DIR (the directory with the index) is needed", file=sys.stderr)
        return 2
    try:
        specs = _indexes(args)
    except StorageError as exc:
        print(f"trawl search: {exc}", file=sys.stderr)
        return 2
    if not any(index_exists(spec.index_dir) for spec in specs):
        again = f"--redis {args.redis} --data {args.data}" if args.redis else f"--data {args.data}"
        print(
            f"trawl search: no index in {args.data} (crawl first, or run `trawl index {again}`)",
            file=sys.stderr,
        )
        return 2
    try:
        with Searcher(indexes=lambda: specs, cache_size=0) as searcher:
            r = searcher.search(args.query, page=args.page, size=args.limit, crawl=args.crawl)
    except QueryError as exc:
        print(f"trawl search: {exc.message}", file=sys.stderr)
        return 2
    except StorageError as exc:  # an index of an older trawl's format
        print(f"trawl search: {exc}", file=sys.stderr)
        return 2
    if args.json:
        body = {
            "query": r.query,
            "corrected": r.corrected,
            "correction_skipped": r.correction_skipped,
            "total": r.total,
            "page": r.page,
            "size": r.size,
            "took_ms": round(r.took_ms, 3),
            "results": [
                {
                    "title": h.title,
                    "link": h.link,
                    "host": h.host,
                    "snippet": h.snippet,
                    "score": h.score,
                    "fetched_at": h.fetched_at,
                    "language": h.language,
                    "crawl": h.crawl,
                }
                for h in r.results
            ],
        }
        sys.stdout.write(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    bold = sys.stdout.isatty()
    if r.corrected:
        print(f"showing results for: {r.corrected}\n")
    if r.correction_skipped:
        print("spelling correction ran out of time: some words were searched as typed\n")
    first = (r.page - 1) * r.size
    for i, hit in enumerate(r.results, start=first + 1):
        print(f"{i}. {hit.title or hit.link}")
        print(f"   {hit.link}")
        print(f"   {_terminal_snippet(hit.snippet, bold=bold)}")
        print()
    shown = f"{first + 1}-{first + len(r.results)} of " if r.results else ""
    noun = "result" if r.total == 1 else "results"
    print(f"{shown}{r.total:,} {noun} in {r.took_ms:.1f} ms")
    return 0


def _index(args: argparse.Namespace) -> int:
    from trawl.index.layout import MAX_SHARDS, shard_count
    from trawl.index.rebuild import rebuild_fleet_index, rebuild_index

    def progress(done: int, total: int) -> None:
        if not args.quiet:
            print(f"\rindexed {done:,} of {total:,} pages", end="", file=sys.stderr, flush=True)

    if args.data is None:
        print("trawl index: --data DIR is needed (where the index is)", file=sys.stderr)
        return 2
    if args.shards is not None and not 1 <= args.shards <= MAX_SHARDS:
        print(f"trawl index: --shards must be from 1 to {MAX_SHARDS}", file=sys.stderr)
        return 2
    try:
        fleet = fleet_place(args)
        if fleet is None:
            summary = rebuild_index(args.data, progress=progress, shards=args.shards)
        else:
            summary = rebuild_fleet_index(fleet, args.data, progress=progress, shards=args.shards)
    except StorageError as exc:
        print(f"trawl index: {exc}", file=sys.stderr)
        return 2
    if not args.quiet and summary.pages:
        print(file=sys.stderr)
    rate = summary.documents / summary.seconds if summary.seconds > 0 else 0.0
    split = shard_count(args.data / "index")
    print(
        f"indexed {summary.documents:,} documents from {summary.pages:,} stored pages "
        f"in {summary.seconds:.1f} s ({rate:,.0f} pages/s) into {args.data / 'index'}"
        + (f" ({split} shards)" if split else "")
    )
    return 0
