"""Every crawl a ``trawl serve`` data directory holds, by id, and what to search.

- ``main``: the data directory itself, when it holds a crawl (``trawl crawl --data
  DIR``, ``make demo``). The server did not start it and does not control it (pause,
  resume, stop answer 409); it is ``running`` while a ``trawl crawl`` holds its lock,
  else ``finished``. Its progress comes from its store (a plain crawl writes no
  ``progress.json``), its settings from the config the crawl saved in it.
- each API crawl, in ``DIR/crawls/<id>/`` (``CrawlManager``; ids are made of a date,
  so never ``main``).

``index_specs`` lists the index of each (a split one stands for its shards): what the
search routes search, across every crawl, or one with ``crawl=ID``.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson

from trawl.config import CrawlConfig
from trawl.config_load import load_config
from trawl.errors import ConfigError, StorageError
from trawl.index.schema import index_exists
from trawl.index.shard import IndexSpec
from trawl.records import Snapshot
from trawl.service.manager import CrawlManager
from trawl.service.runner import SPEC_FILE
from trawl.service.spec import to_config
from trawl.service.views import crawl_view, progress_view
from trawl.storage.open import has_crawl, in_use, open_reader
from trawl.telemetry import PROGRESS_FILE, read_json

MAIN = "main"
_MAIN_TTL = 2.0  # seconds a view of the main crawl's store is reused (the dashboard polls)


class Catalog:
    """The crawls in ``data_dir``: ``main`` (if it holds one) and the manager's."""

    def __init__(self, data_dir: Path, manager: CrawlManager) -> None:
        self.data_dir = data_dir
        self.manager = manager
        self._main_view: tuple[float, dict[str, Any]] | None = None

    def has_main(self) -> bool:
        return has_crawl(self.data_dir)

    def ids(self) -> list[str]:
        return ([MAIN] if self.has_main() else []) + self.manager.ids()

    def directory(self, crawl_id: str) -> Path | None:
        if crawl_id == MAIN:
            return self.data_dir if self.has_main() else None
        return self.manager.directory(crawl_id)

    def index_specs(self) -> list[IndexSpec]:
        """The index of every crawl, ``main`` first (an index may not exist yet)."""
        specs = []
        if self.has_main() or index_exists(self.data_dir / "index"):
            specs.append(IndexSpec(MAIN, self.data_dir / "index"))
        for crawl_id in self.manager.ids():
            specs.append(IndexSpec(crawl_id, self.manager.root / crawl_id / "index"))
        return specs

    def status(self, crawl_id: str) -> str:
        if crawl_id == MAIN:
            return "running" if in_use(self.data_dir) else "finished"
        return self.manager.status(crawl_id)

    def config(self, crawl_id: str, directory: Path) -> CrawlConfig:
        """The crawl's settings (what a host's delay is computed from)."""
        if crawl_id != MAIN:
            return to_config(read_json(directory / SPEC_FILE) or {}, directory)
        saved = self._saved_config()
        try:
            return load_config(overrides={**saved, "data_dir": directory})
        except ConfigError:  # a config of another trawl version: the defaults
            return load_config(overrides={"data_dir": directory})

    def view(self, crawl_id: str, *, full: bool) -> dict[str, Any]:
        if crawl_id != MAIN:
            return {**crawl_view(self.manager, crawl_id, full=full), "managed": True}
        now = time.monotonic()
        if self._main_view is None or now - self._main_view[0] >= _MAIN_TTL:
            self._main_view = (now, self._read_main())
        out = dict(self._main_view[1])
        if full:
            out["spec"] = {k: v for k, v in self._saved_config().items() if k != "seeds"}
        return out

    def _read_main(self) -> dict[str, Any]:
        saved = self._saved_config()
        seeds = saved.get("seeds") if isinstance(saved.get("seeds"), list) else []
        return {
            "id": MAIN,
            "name": self.data_dir.resolve().name,
            "state": self.status(MAIN),
            "created": None,
            "finished": None,
            "stopped": None,
            "error": None,
            "seeds": [str(s) for s in (seeds or [])][:20],
            "purpose": str(saved.get("purpose", "search")),
            "progress": progress_view(self._main_progress()),
            "managed": False,
        }

    def _main_progress(self) -> dict[str, Any] | None:
        written = read_json(self.data_dir / PROGRESS_FILE)
        if written is not None:
            return written
        try:
            reader = open_reader(self.data_dir)
        except StorageError:
            return None
        try:
            stats = reader.stats()
        except StorageError:
            return None
        finally:
            reader.close()
        snapshot = Snapshot.of(
            Counter(stats.urls),
            stats.counters,
            elapsed=0.0,
            pages_per_second=0.0,
            bytes=0,
            hosts_ready=0,
            hosts_waiting=stats.hosts_with_queued,
            parse_backlog=stats.parse_backlog,
        )
        return {"snapshot": asdict(snapshot), "counters": stats.counters, "updated": time.time()}

    def _saved_config(self) -> dict[str, Any]:
        try:
            reader = open_reader(self.data_dir)
        except StorageError:
            return {}
        try:
            raw = reader.meta("config")
        except StorageError:
            return {}
        finally:
            reader.close()
        try:
            saved = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError:
            return {}
        return saved if isinstance(saved, dict) else {}
