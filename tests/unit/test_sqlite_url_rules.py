"""A data directory written before learned URL equivalences: read as it is, resumed
with the new tables made on open."""

from __future__ import annotations

from pathlib import Path

from trawl.dedup.urlrules import UrlRule
from trawl.storage.sqlite.reader import SqliteCrawlReader
from trawl.storage.sqlite.store import SqliteCrawlStore


def test_a_data_directory_from_before_equivalences(tmp_path: Path) -> None:
    store = SqliteCrawlStore(tmp_path / "state.db")
    for table in ("url_rules", "url_rewrites"):  # as an older trawl left it
        store.db.conn.execute(f"DROP TABLE {table}")
    store.close()
    reader = SqliteCrawlReader(tmp_path)
    assert reader.url_rules() == []  # trawl stats on it, not resumed
    reader.close()
    store = SqliteCrawlStore(tmp_path / "state.db")  # resumed
    store.url_rules.save(UrlRule("a.example", "slash"))
    store.close()
    reader = SqliteCrawlReader(tmp_path)
    assert reader.url_rules() == [UrlRule("a.example", "slash")]
    reader.close()
