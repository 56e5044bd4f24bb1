"""``trawl export``: the kept documents of a crawl as Parquet or gzipped JSONL, or
(``--links``) its link graph as Parquet."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trawl.cli._place import add_place_arguments, place_of
from trawl.errors import TrawlError

if TYPE_CHECKING:
    from trawl.export import ExportSummary
    from trawl.export_links import LinksSummary


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "export",
        help="write the kept documents as Parquet or JSONL, or the link graph (--links)",
        description="Write the documents a crawl kept (text, URL, date, language, "
        "provenance and quality signals), or with --links every link of the pages it "
        "followed (source, target, anchor text, nofollow, fingerprints, hosts), in the "
        "schemas of docs/export-schema.md. Only what the crawl has committed is exported, "
        "so a running crawl can be exported.",
    )
    add_place_arguments(p, data_help="the crawl's data directory (or --redis)")
    p.add_argument(
        "--links", action="store_true", help="export the link graph (Parquet) instead of documents"
    )
    p.add_argument("--format", choices=["parquet", "jsonl"], default=None, help="default parquet")
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument(
        "--docs-per-file",
        type=int,
        default=None,
        metavar="N",
        help="rows per file: documents (100000), or links with --links (5000000)",
    )
    p.add_argument(
        "--row-group",
        type=int,
        default=None,
        metavar="N",
        help="rows per row group: documents (10000), or links with --links (200000)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace an earlier export in --out")
    p.set_defaults(handler=_export)


def _given(value: int | None, default: int) -> int:
    return default if value is None else value


def _export(args: argparse.Namespace) -> int:
    from trawl.export import export
    from trawl.export_links import export_links

    if args.links and args.format == "jsonl":
        print("trawl export: --links writes Parquet only", file=sys.stderr)
        return 2
    superseded = 0
    try:
        if args.links:
            links = export_links(
                place_of(args),
                args.out,
                links_per_file=_given(args.docs_per_file, 5_000_000),
                row_group_links=_given(args.row_group, 200_000),
                overwrite=args.overwrite,
            )
            what = f"{links.links:,} links of {links.pages:,} pages"
            summary: ExportSummary | LinksSummary = links
        else:
            docs = export(
                place_of(args),
                args.out,
                format=args.format or "parquet",
                docs_per_file=_given(args.docs_per_file, 100_000),
                row_group_docs=_given(args.row_group, 10_000),
                overwrite=args.overwrite,
            )
            what = f"{docs.documents:,} documents"
            summary = docs
            superseded = docs.superseded
    except TrawlError as exc:
        print(f"trawl export: {exc}", file=sys.stderr)
        return 2
    files = len(summary.files)
    log = "links" if args.links else "text"
    print(
        f"exported {what} to {files} file{'s' * (files != 1)} in {args.out} "
        f"({log} committed up to {summary.committed})"
    )
    if summary.skipped:
        unit = "records" if args.links else "lines"
        print(f"skipped {summary.skipped} unreadable {unit}", file=sys.stderr)
    if superseded:
        print(
            f"left out {superseded} text records stored again by another worker "
            "(a commit cut off before its pages)",
            file=sys.stderr,
        )
    return 0
