"""Export: a real data directory (TextStore + SegmentLog + the DB's committed position)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from trawl.archive.textstore import TextStore
from trawl.cli import main
from trawl.export import ExportError, arrow_schema, export, normalize
from trawl.models import Location
from trawl.parse.quality import quality_signals
from trawl.storage.base import CrawlStore, PageRecord
from trawl.storage.blobs import TEXT_LOG
from trawl.storage.open import open_blobs, open_store


def _record(n: int, **extra: Any) -> dict[str, Any]:
    text = f"Document number {n} has a body of text. It ends with a full stop."
    return {
        "id": f"{n:032x}",
        "url": f"http://a.example/{n}",
        "final_url": f"http://a.example/{n}",
        "fetch_time": "2026-01-02T03:04:05.678Z",
        "status": 200,
        "title": f"Title {n}",
        "text": text,
        "language": "en",
        "language_confidence": 0.98,
        "content_hash": f"{n:064x}",
        "depth": 1,
        "warc": {"file": "trawl-00001.warc.gz", "offset": 100 * n, "length": 99},
        "cluster": f"{n:064x}",
        "near_duplicate_of": None,
        "provenance": {"robots": "allowed", "robots_agents": ["trawl", "GPTBot"]},
        "quality": quality_signals(text).as_dict(),
        **extra,
    }


def _store(crawl_store: CrawlStore, texts: TextStore, n: int) -> None:
    """One document: its text record, and the page that names it."""
    record = _record(n)
    where = texts.append(record)
    crawl_store.pages.add(
        PageRecord(
            content_hash=record["content_hash"],
            url=record["url"],
            host="a.example",
            fp=n,
            fetched_at=1_000.0 + n,
            title=record["title"],
            language="en",
            warc=Location("trawl-00001.warc.gz", 100 * n, 99),
            text=where,
        )
    )


def _crawl_dir(tmp_path: Path, committed: int, uncommitted: int, *, max_bytes: int = 10**9) -> Path:
    """A data dir whose DB says the first ``committed`` records are durable."""
    data = tmp_path / "data"
    crawl_store = open_store(data)
    log = open_blobs(data).open_writer(TEXT_LOG, committed=None, max_bytes=max_bytes)
    texts = TextStore(log)
    for n in range(committed):
        _store(crawl_store, texts, n)
    crawl_store.commit({TEXT_LOG.name: log.sync()})
    for n in range(committed, committed + uncommitted):
        _store(crawl_store, texts, n)
    log.sync()  # on disk, but past the committed position
    log.close()
    crawl_store.close(commit=False)
    return data


def test_parquet_export_reads_back_and_stops_at_the_committed_position(tmp_path: Path) -> None:
    data = _crawl_dir(tmp_path, committed=25, uncommitted=3)
    out = tmp_path / "out"
    summary = export(data, out, docs_per_file=10, row_group_docs=4)
    assert summary.documents == 25
    assert summary.files == ("part-00000.parquet", "part-00001.parquet", "part-00002.parquet")
    table = pq.read_table(out)  # the directory, as pandas/DuckDB/datasets would read it
    assert table.num_rows == 25
    assert table.schema.equals(arrow_schema(), check_metadata=False)
    rows = table.to_pylist()
    assert sorted(r["id"] for r in rows) == [f"{n:032x}" for n in range(25)]
    first = next(r for r in rows if r["id"] == f"{0:032x}")
    assert first["warc"] == {"file": "trawl-00001.warc.gz", "offset": 0, "length": 99}
    assert first["provenance"]["robots_agents"] == ["trawl", "GPTBot"]
    assert first["provenance"]["license"] is None
    assert first["quality"]["words"] == 14
    assert first["fetch_time"].isoformat() == "2026-01-02T03:04:05.678000+00:00"
    assert first["extra"] is None
    assert pq.ParquetFile(out / "part-00000.parquet").metadata.num_row_groups == 3
    manifest = orjson.loads((out / "_manifest.json").read_bytes())
    assert manifest["documents"] == 25 and manifest["files"] == list(summary.files)
    assert not list(out.glob(".*tmp"))


def test_export_over_rotated_files(tmp_path: Path) -> None:
    data = _crawl_dir(tmp_path, committed=30, uncommitted=5, max_bytes=2_000)
    assert len(list((data / "text").iterdir())) > 3
    summary = export(data, tmp_path / "out", format="jsonl")
    assert summary.documents == 30


def test_jsonl_export_has_the_same_columns(tmp_path: Path) -> None:
    data = _crawl_dir(tmp_path, committed=3, uncommitted=1)
    export(data, tmp_path / "out", format="jsonl")
    with gzip.open(tmp_path / "out" / "part-00000.jsonl.gz") as f:
        rows = [orjson.loads(line) for line in f]
    assert len(rows) == 3
    assert rows[0]["fetch_time"] == "2026-01-02T03:04:05.678Z"
    assert set(rows[0]) == set(arrow_schema().names)


def test_unknown_and_mistyped_fields_go_to_extra() -> None:
    row, extra = normalize(_record(1, status="200", novel=[1], provenance={"x": 1, "license": 5}))
    assert row["status"] is None
    assert row["provenance"]["license"] is None
    assert extra == {"status": "200", "novel": [1], "provenance.x": 1, "provenance.license": 5}
    row, extra = normalize({})
    assert row["id"] is None and row["warc"] is None and extra == {}


def test_nothing_committed_exports_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    open_store(data).close()
    assert export(data, tmp_path / "out").documents == 0


def test_an_earlier_export_is_kept_unless_overwrite(tmp_path: Path) -> None:
    data = _crawl_dir(tmp_path, committed=12, uncommitted=0)
    out = tmp_path / "out"
    export(data, out, docs_per_file=5)
    with pytest.raises(ExportError):
        export(data, out)
    summary = export(data, out, docs_per_file=100, overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == ["_manifest.json", "part-00000.parquet"]
    assert summary.documents == 12


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _crawl_dir(tmp_path, committed=2, uncommitted=1)
    assert main(["export", "--data", str(data), "--out", str(tmp_path / "o")]) == 0
    assert "exported 2 documents to 1 file" in capsys.readouterr().out
    assert main(["export", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "p")]) == 2
    assert "no crawl" in capsys.readouterr().err
