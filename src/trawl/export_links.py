"""``trawl export --links``: a crawl's link graph as Parquet.

Reads each writer's link log (``archive/links.py``) up to the end the crawl's store
committed, as ``trawl export`` reads the text log, so a running crawl exports a
consistent snapshot, and writes one row per link (schema in docs/export-schema.md,
``LINK_FIELDS``): the source page, the target, its anchor text, whether it was
nofollow, and the keys a ranking pipeline joins and groups on (64-bit fingerprints
as the frontier computes them, hosts, the link's position on its page, when the
page was fetched). A page fetched again (a revisit) gives its links again with its
new fetch time. Parts and manifest are written as ``trawl export`` writes them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from trawl import urls
from trawl.archive.links import read_link_records
from trawl.errors import UrlError
from trawl.export import _PART, ExportError, ParquetParts, _committed_text, _fsync_replace
from trawl.models import Position
from trawl.storage.blobs import LINK_LOG, BlobStore, LogSpec, committed_ends
from trawl.storage.place import CrawlPlace

__all__ = ["LINKS_SCHEMA_VERSION", "LINK_FIELDS", "LinksSummary", "export_links", "link_rows"]

LINKS_SCHEMA_VERSION = 1
# (column, Arrow type name): see docs/export-schema.md.
LINK_FIELDS = (
    ("source_url", "string"),
    ("target_url", "string"),
    ("anchor", "string"),
    ("nofollow", "bool"),
    ("source_host", "string"),
    ("target_host", "string"),
    ("source_fp", "int64"),
    ("target_fp", "int64"),
    ("position", "int32"),
    ("fetched_at", "timestamp"),
)


@dataclass(frozen=True, slots=True)
class LinksSummary:
    pages: int
    links: int
    files: tuple[str, ...]
    committed: str  # where the link log was read up to ("index:offset", or per writer)
    skipped: int  # unreadable records (none in a healthy crawl)


def _host(url: str) -> str | None:
    try:
        return urls.host_key(url)
    except UrlError:
        return None


def link_rows(
    records: Iterator[dict[str, Any]], *, dedupe: bool = False
) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of each page's record, in ``LINK_FIELDS`` order. ``dedupe``: a record
    of the same page and fetch time as one before is skipped (a fleet's worker killed
    in the middle of its commit may leave a page's links twice)."""
    seen: set[bytes] = set()
    for record in records:
        source, fetched = record["u"], record.get("t")
        if dedupe:
            key = hashlib.blake2b(f"{fetched!r} {source}".encode(), digest_size=16).digest()
            if key in seen:
                continue
            seen.add(key)
        when = datetime.fromtimestamp(fetched, UTC) if isinstance(fetched, int | float) else None
        s_host, s_fp = _host(source), urls.fingerprint(source)
        rows = []
        position = 0
        for kind, nofollow in (("l", False), ("n", True)):
            for pair in record.get(kind) or ():
                if not isinstance(pair, list) or not pair or not isinstance(pair[0], str):
                    continue
                target, anchor = pair[0], pair[1] if len(pair) > 1 else ""
                rows.append(
                    (
                        source,
                        target,
                        anchor if isinstance(anchor, str) else "",
                        nofollow,
                        s_host,
                        _host(target),
                        s_fp,
                        urls.fingerprint(target),
                        position,
                        when,
                    )
                )
                position += 1
        yield rows


def arrow_schema() -> Any:
    import pyarrow as pa  # type: ignore[import-untyped]

    types = {
        "string": pa.string(),
        "bool": pa.bool_(),
        "int64": pa.int64(),
        "int32": pa.int32(),
        "timestamp": pa.timestamp("ms", tz="UTC"),
    }
    return pa.schema(
        [pa.field(name, types[kind]) for name, kind in LINK_FIELDS],
        metadata={"trawl.links_schema_version": str(LINKS_SCHEMA_VERSION)},
    )


def export_links(
    crawl: Path | CrawlPlace,
    out_dir: Path,
    *,
    links_per_file: int = 5_000_000,
    row_group_links: int = 200_000,
    overwrite: bool = False,
) -> LinksSummary:
    """Write the committed link graph of ``crawl`` (a data directory, or a crawl in
    Redis) to ``out_dir`` as Parquet parts and a ``_manifest.json``."""
    if links_per_file < 1 or row_group_links < 1:
        raise ExportError("links per file and per row group must be at least 1")
    place = crawl if isinstance(crawl, CrawlPlace) else CrawlPlace(data=crawl)
    reader = place.reader()
    try:
        ends = committed_ends(reader.committed_logs(), LINK_LOG)
    finally:
        reader.close()
    out_dir.mkdir(parents=True, exist_ok=True)
    old = {p.name for p in out_dir.iterdir() if _PART.match(p.name) or p.name == "_manifest.json"}
    if old and not overwrite:
        raise ExportError(f"{out_dir} holds an export already (use --overwrite to replace it)")
    bad = [0]
    blobs = place.blob_store() if ends else None
    records = _records(blobs, ends, bad)
    try:
        files, pages, count = _write(
            link_rows(records, dedupe=place.redis is not None),
            out_dir,
            links_per_file,
            row_group_links,
        )
    except BaseException:
        for p in out_dir.glob(".part-*.tmp"):
            p.unlink(missing_ok=True)
        raise
    for name in old - set(files) - {"_manifest.json"}:
        (out_dir / name).unlink(missing_ok=True)
    committed = _committed_text(ends)
    manifest = {
        "schema_version": LINKS_SCHEMA_VERSION,
        "kind": "links",
        "format": "parquet",
        "pages": pages,
        "links": count,
        "files": files,
        "committed": committed,
        "skipped_records": bad[0],
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    tmp = out_dir / "._manifest.json.tmp"
    tmp.write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n")
    _fsync_replace(tmp, out_dir / "_manifest.json")
    return LinksSummary(pages, count, tuple(files), committed, bad[0])


def _records(
    blobs: BlobStore | None, ends: list[tuple[LogSpec, Position]], bad: list[int]
) -> Iterator[dict[str, Any]]:
    for spec, end in ends:
        assert blobs is not None
        yield from read_link_records(blobs, spec, end, bad=bad)


def _write(
    pages: Iterator[list[tuple[Any, ...]]],
    out_dir: Path,
    per_file: int,
    per_group: int,
) -> tuple[list[str], int, int]:
    try:
        import pyarrow as pa
    except ImportError as exc:  # pragma: no cover - pyarrow is a dependency
        raise ExportError("Parquet export needs pyarrow: pip install pyarrow") from exc
    schema = arrow_schema()
    names = [name for name, _ in LINK_FIELDS]

    def to_table(rows: list[tuple[Any, ...]]) -> Any:
        columns = list(zip(*rows, strict=True))
        arrays = {
            n: pa.array(c, type=schema.field(n).type) for n, c in zip(names, columns, strict=True)
        }
        return pa.table(arrays, schema=schema)

    parts = ParquetParts(out_dir, schema, to_table, per_file=per_file, per_group=per_group)
    page_count = count = 0
    for page in pages:
        page_count += 1
        for row in page:
            parts.add(row)
            count += 1
    parts.close()
    return parts.files, page_count, count
