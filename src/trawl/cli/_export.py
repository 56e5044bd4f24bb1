"""``trawl export``: the kept documents of a crawl as Parquet or gzipped JSONL."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from trawl.cli._place import add_place_arguments, place_of
from trawl.errors import TrawlError


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "export",
        help="write the kept documents as Parquet or JSONL (also while a crawl runs)",
        description="Write the documents a crawl kept (text, URL, date, language, "
        "provenance and quality signals) in the schema of docs/export-schema.md. Only "
        "what the crawl has committed is exported, so a running crawl can be exported.",
    )
    add_place_arguments(p, data_help="the crawl's data directory (or --redis)")
    p.add_argument("--format", choices=["parquet", "jsonl"], default="parquet")
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--docs-per-file", type=int, default=100_000, metavar="N")
    p.add_argument("--row-group", type=int, default=10_000, metavar="N", help="docs per row group")
    p.add_argument("--overwrite", action="store_true", help="replace an earlier export in --out")
    p.set_defaults(handler=_export)


def _export(args: argparse.Namespace) -> int:
    from trawl.export import export

    try:
        summary = export(
            place_of(args),
            args.out,
            format=args.format,
            docs_per_file=args.docs_per_file,
            row_group_docs=args.row_group,
            overwrite=args.overwrite,
        )
    except TrawlError as exc:
        print(f"trawl export: {exc}", file=sys.stderr)
        return 2
    files = len(summary.files)
    print(
        f"exported {summary.documents:,} documents to {files} file{'s' * (files != 1)} "
        f"in {args.out} (text committed up to {summary.committed})"
    )
    if summary.skipped:
        print(f"skipped {summary.skipped} unreadable lines", file=sys.stderr)
    return 0
