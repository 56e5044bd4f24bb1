"""``trawl export``: the kept documents of a crawl as Parquet or gzipped JSONL.

Reads the text records (the crawl's text log, through its ``BlobStore``) only up to the
end the crawl's store has committed (``CrawlReader.committed_logs``): bytes past
it may be a record cut off mid-write or one the crawl will redo, so an export of a
running crawl is a consistent snapshot. A record is a document when its page (the
store's one record of that text) names it: a fleet worker stopped after its commit
made its logs' ends durable and before its pages were written leaves records that
another worker then stores again; the copy no page names is left out (``superseded``).
Every record is mapped onto one fixed schema (``SCHEMA``, documented in
docs/export-schema.md): missing fields become nulls, values of the wrong type nulls
too, and fields the schema does not know are kept as JSON in the ``extra`` column,
so nothing is lost and every file has the same columns.

Output files are written under a temporary name and renamed when complete, then a
``_manifest.json`` (written the same way) lists them: a reader that sees the manifest
sees every file it names whole.
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from trawl.errors import StorageError, TrawlError
from trawl.models import Position
from trawl.parse.quality import QualitySignals
from trawl.storage.base import PageRecord
from trawl.storage.blobs import TEXT_LOG, BlobStore, LogSpec
from trawl.storage.blobs import committed_ends as blob_ends
from trawl.storage.place import CrawlPlace

__all__ = ["SCHEMA_VERSION", "ExportError", "ExportSummary", "committed_records", "export"]

SCHEMA_VERSION = 2  # 2: the truncated column
_PART = re.compile(r"part-\d{5}\.(?:parquet|jsonl\.gz)$")

# The schema as plain data: (name, kind); nested kinds list their own fields.
_WARC = (("file", "str"), ("offset", "int"), ("length", "int"))
_PROVENANCE = (
    ("robots", "str"),
    ("robots_agents", "strs"),
    ("directives", "strs"),
    ("opt_out", "strs"),
    ("tdm_reserved", "bool"),
    ("tdm_policy", "str"),
    ("tdm_source", "str"),
    ("license", "str"),
    ("render", "str"),
)
_QUALITY = tuple(
    (name, "int" if name in ("chars", "words", "lines", "stop_words") else "float")
    for name in QualitySignals.field_names()
)
FIELDS: tuple[tuple[str, Any], ...] = (
    ("id", "str"),
    ("url", "str"),
    ("final_url", "str"),
    ("fetch_time", "time"),
    ("status", "int"),
    ("title", "str"),
    ("text", "str"),
    ("language", "str"),
    ("language_confidence", "float"),
    ("content_hash", "str"),
    ("depth", "int"),
    ("warc", _WARC),
    ("cluster", "str"),
    ("near_duplicate_of", "str"),
    ("provenance", _PROVENANCE),
    ("quality", _QUALITY),
    ("quality_failures", "strs"),
    ("truncated", "str"),
)


class ExportError(TrawlError):
    """The export cannot be done (no crawl, output in the way, ...)."""


@dataclass(frozen=True, slots=True)
class ExportSummary:
    documents: int
    files: tuple[str, ...]
    committed: str  # where the text log was read up to, "index:offset" (a fleet: per writer)
    skipped: int  # unreadable lines (none in a healthy crawl)
    superseded: int = 0  # committed records no page names (a fleet's cut-off commits)


# -- reading only what is committed ------------------------------------------------------


def committed_ends(place: CrawlPlace) -> list[tuple[LogSpec, Position]]:
    """Each writer's text log and where its committed part ends (one in a data
    directory, one per worker in a fleet)."""
    reader = place.reader()
    try:
        return blob_ends(reader.committed_logs(), TEXT_LOG)
    finally:
        reader.close()


# How many records are checked against their pages at once (one store round trip).
_BATCH = 512

PagesOf = Callable[[Sequence[str]], "dict[str, PageRecord]"]


def committed_records(
    blobs: BlobStore,
    ends: Sequence[tuple[LogSpec, Position]],
    skipped: list[int],
    pages_of: PagesOf,
    superseded: list[int] | None = None,
) -> Iterator[dict[str, Any]]:
    """Every stored text record before each writer's end, in log order: bad lines are
    counted in ``skipped``, records no page names (``pages_of``) in ``superseded``."""
    left_out = superseded if superseded is not None else [0]
    for spec, end in ends:
        for index in range(1, end.index + 1):
            stop = end.offset if index == end.index else None
            segment = spec.segment(index)
            batch: list[dict[str, Any]] = []
            for record in _lines(blobs, spec, segment, stop):
                if not isinstance(record, dict):
                    skipped[0] += 1
                    continue
                batch.append(record)
                if len(batch) >= _BATCH:
                    yield from _named(batch, segment, pages_of, left_out)
                    batch = []
            yield from _named(batch, segment, pages_of, left_out)


def _named(
    batch: list[dict[str, Any]], segment: str, pages_of: PagesOf, left_out: list[int]
) -> Iterator[dict[str, Any]]:
    """The records of ``batch`` (from ``segment``) that their pages name."""
    hashes = [h for h in (r.get("content_hash") for r in batch) if isinstance(h, str)]
    pages = pages_of(hashes) if hashes else {}
    for record in batch:
        page = pages.get(str(record.get("content_hash")))
        # A writer stores a text once, so its page naming this segment names this record.
        if page is not None and page.text.file == segment:
            yield record
        else:
            left_out[0] += 1


def _lines(blobs: BlobStore, spec: LogSpec, segment: str, stop: int | None) -> Iterator[object]:
    """Each JSON line of one committed segment (None for a bad line or a damaged rest)."""
    try:
        with (
            blobs.open_range(spec, segment, 0, stop) as raw,
            gzip.GzipFile(fileobj=raw) as f,
        ):
            for line in f:
                if line.strip():
                    try:
                        yield orjson.loads(line)
                    except orjson.JSONDecodeError:
                        yield None
    except (OSError, EOFError, StorageError):
        yield None  # a damaged file: what was read stands, the rest is counted once


# -- one fixed schema ----------------------------------------------------------------------


def _coerce(kind: str, value: object) -> tuple[object, bool]:
    """(value in the schema's type or None, whether it was usable)."""
    if value is None:
        return None, True
    if kind == "str":
        return (value, True) if isinstance(value, str) else (None, False)
    if kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
        return (value, True) if ok else (None, False)
    if kind == "float":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return (float(value), True) if ok else (None, False)  # type: ignore[arg-type]
    if kind == "bool":
        return (value, True) if isinstance(value, bool) else (None, False)
    if kind == "strs":
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return (value, True) if ok else (None, False)
    if kind == "time":
        if not isinstance(value, str):
            return None, False
        try:
            t = datetime.fromisoformat(value)
        except ValueError:
            return None, False
        return (t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)), True
    return None, False


def _shape(
    spec: tuple[tuple[str, Any], ...], record: object, extra: dict[str, Any], path: str
) -> dict[str, Any]:
    data = record if isinstance(record, dict) else {}
    out: dict[str, Any] = {}
    for name, kind in spec:
        value = data.get(name)
        if isinstance(kind, tuple):
            if value is None:
                out[name] = None
            elif isinstance(value, dict):
                out[name] = _shape(kind, value, extra, f"{path}{name}.")
            else:
                out[name] = None
                extra[f"{path}{name}"] = value
            continue
        out[name], ok = _coerce(kind, value)
        if not ok:
            extra[f"{path}{name}"] = value
    known = {name for name, _ in spec}
    for name, value in data.items():
        if name not in known:
            extra[f"{path}{name}"] = value
    return out


def normalize(record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A record in the schema's shape (``fetch_time`` a datetime), and what did not fit."""
    extra: dict[str, Any] = {}
    return _shape(FIELDS, record, extra, ""), extra


# -- writing -------------------------------------------------------------------------------


def export(
    crawl: Path | CrawlPlace,
    out_dir: Path,
    *,
    format: str = "parquet",
    docs_per_file: int = 100_000,
    row_group_docs: int = 10_000,
    overwrite: bool = False,
) -> ExportSummary:
    """Write the committed documents of ``crawl`` (a data directory, or a crawl in Redis)
    to ``out_dir``."""
    if format not in ("parquet", "jsonl"):
        raise ExportError(f"unknown format {format!r} (parquet or jsonl)")
    if docs_per_file < 1 or row_group_docs < 1:
        raise ExportError("docs_per_file and row_group_docs must be at least 1")
    place = crawl if isinstance(crawl, CrawlPlace) else CrawlPlace(data=crawl)
    ends = committed_ends(place)
    committed = _committed_text(ends)
    out_dir.mkdir(parents=True, exist_ok=True)
    old = {p.name for p in out_dir.iterdir() if _PART.match(p.name) or p.name == "_manifest.json"}
    if old and not overwrite:
        raise ExportError(f"{out_dir} holds an export already (use --overwrite to replace it)")
    skipped, superseded = [0], [0]
    reader = place.reader()
    records = (
        committed_records(place.blob_store(), ends, skipped, reader.pages_of, superseded)
        if ends
        else iter(())
    )
    try:
        if format == "parquet":
            files, count = _write_parquet(records, out_dir, docs_per_file, row_group_docs)
        else:
            files, count = _write_jsonl(records, out_dir, docs_per_file)
    except BaseException:
        for p in out_dir.glob(".part-*.tmp"):  # a failed export leaves no half file behind
            p.unlink(missing_ok=True)
        raise
    finally:
        reader.close()
    for name in old - set(files) - {"_manifest.json"}:
        (out_dir / name).unlink(missing_ok=True)
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "format": format,
        "documents": count,
        "files": list(files),
        "committed": committed,
        "skipped_lines": skipped[0],
        "superseded_records": superseded[0],
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    tmp = out_dir / "._manifest.json.tmp"
    tmp.write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n")
    _fsync_replace(tmp, out_dir / "_manifest.json")
    return ExportSummary(count, tuple(files), committed, skipped[0], superseded[0])


def _committed_text(ends: Sequence[tuple[LogSpec, Position]]) -> str:
    """``index:offset`` of the one log, or ``writer=index:offset,...`` of a fleet's."""
    if not ends:
        return Position(0, 0).dump()
    if len(ends) == 1 and not ends[0][0].writer:
        return ends[0][1].dump()
    return ",".join(f"{spec.writer or '-'}={end.dump()}" for spec, end in ends)


def _fsync_replace(tmp: Path, final: Path) -> None:
    """Make ``tmp`` durable, then give it its final name (and make the rename durable)."""
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, final)
    fd = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _arrow_type(pa: Any, kind: object) -> Any:
    if isinstance(kind, tuple):
        return pa.struct([pa.field(n, _arrow_type(pa, k)) for n, k in kind])
    return {
        "str": pa.string(),
        "int": pa.int64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
        "strs": pa.list_(pa.string()),
        "time": pa.timestamp("ms", tz="UTC"),
    }[str(kind)]


def arrow_schema() -> Any:
    """The Parquet schema (a ``pyarrow.Schema``): every column nullable."""
    import pyarrow as pa  # type: ignore[import-untyped]

    columns = [pa.field(name, _arrow_type(pa, kind)) for name, kind in FIELDS]
    columns.append(pa.field("extra", pa.string()))
    return pa.schema(columns, metadata={"trawl.schema_version": str(SCHEMA_VERSION)})


# A row group is flushed early past this much text (Arrow strings use 32-bit offsets).
_ROW_GROUP_BYTES = 256 * 1024 * 1024


class ParquetParts:
    """Rows written as Parquet files ``part-NNNNN.parquet`` of at most ``per_file`` rows
    each, a row group every ``per_group`` rows (or ``group_bytes`` of the sizes given),
    each file put in place whole (written aside, fsynced, renamed) once full or at
    ``close``. ``to_table(rows)`` makes an Arrow table of the buffered rows."""

    def __init__(
        self,
        out_dir: Path,
        schema: Any,
        to_table: Callable[[list[Any]], Any],
        *,
        per_file: int,
        per_group: int,
        group_bytes: int | None = None,
    ) -> None:
        self.files: list[str] = []
        self._out, self._schema, self._to_table = out_dir, schema, to_table
        self._per_file, self._per_group, self._group_bytes = per_file, per_group, group_bytes
        self._writer: Any = None
        self._tmp = self._final = out_dir
        self._rows: list[Any] = []
        self._size = self._in_file = 0

    def add(self, row: Any, size: int = 0) -> None:
        if self._writer is None:
            import pyarrow.parquet as pq  # type: ignore[import-untyped]

            name = f"part-{len(self.files):05d}.parquet"
            self._tmp, self._final = self._out / f".{name}.tmp", self._out / name
            self._writer = pq.ParquetWriter(self._tmp, self._schema, compression="zstd")
            self.files.append(name)
            self._in_file = 0
        self._rows.append(row)
        self._size += size
        self._in_file += 1
        big = self._group_bytes is not None and self._size >= self._group_bytes
        if len(self._rows) >= self._per_group or big:
            self._flush()
        if self._in_file >= self._per_file:
            self.close()

    def _flush(self) -> None:
        if self._rows:
            self._writer.write_table(self._to_table(self._rows))
            self._rows.clear()
        self._size = 0

    def close(self) -> None:
        """Write what is buffered and put the open file in place (then more may come)."""
        if self._writer is not None:
            self._flush()
            self._writer.close()
            self._writer = None
            _fsync_replace(self._tmp, self._final)


def _write_parquet(
    records: Iterator[dict[str, Any]], out_dir: Path, docs_per_file: int, row_group_docs: int
) -> tuple[list[str], int]:
    try:
        import pyarrow as pa
    except ImportError as exc:  # pragma: no cover - pyarrow is a dependency
        raise ExportError("Parquet export needs pyarrow: pip install pyarrow") from exc
    schema = arrow_schema()
    parts = ParquetParts(
        out_dir,
        schema,
        lambda rows: pa.Table.from_pylist(rows, schema=schema),
        per_file=docs_per_file,
        per_group=row_group_docs,
        group_bytes=_ROW_GROUP_BYTES,
    )
    count = 0
    for record in records:
        row, extra = normalize(record)
        row["extra"] = orjson.dumps(extra).decode() if extra else None
        parts.add(row, len(row["text"] or "") + len(row["title"] or ""))
        count += 1
    parts.close()
    return parts.files, count


def _write_jsonl(
    records: Iterator[dict[str, Any]], out_dir: Path, docs_per_file: int
) -> tuple[list[str], int]:
    files: list[str] = []
    count = in_file = 0
    f: Any = None
    tmp = final = out_dir
    for record in records:
        if f is None:
            name = f"part-{len(files):05d}.jsonl.gz"
            tmp, final = out_dir / f".{name}.tmp", out_dir / name
            f = gzip.open(tmp, "wb", compresslevel=6)  # noqa: SIM115 - one per output part
            files.append(name)
            in_file = 0
        row, extra = normalize(record)
        t = row["fetch_time"]
        row["fetch_time"] = None if t is None else _iso(t)
        row["extra"] = extra or None
        f.write(orjson.dumps(row, default=str) + b"\n")
        count += 1
        in_file += 1
        if in_file >= docs_per_file:
            f.close()
            f = None
            _fsync_replace(tmp, final)
    if f is not None:
        f.close()
        _fsync_replace(tmp, final)
    return files, count


def _iso(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")
