"""Times every SQLite statement of a ``trawl crawl`` process (bench/_sqlstats.py).

Put on ``PYTHONPATH`` with ``TRAWL_SQLTRACE_OUT`` set: ``sqlite3.connect`` then makes
connections whose ``execute`` and ``executemany`` are timed in the calling thread
(``time.thread_time``: the statement's CPU, not the wait for the GIL), and at exit the
crawl process writes, per statement text, its calls, rows and CPU-seconds as JSON.
Row fetching after the call is not included. Other processes (parse workers, the
forkserver) write nothing.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import sqlite3
import sys
import time
from collections.abc import Iterable
from typing import Any

_OUT = os.environ.get("TRAWL_SQLTRACE_OUT")
_stats: dict[str, list[float]] = {}  # statement -> [calls, rows, seconds]


def _key(sql: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\?(\s*,\s*\?)+", "?..", sql)).strip()[:160]


def _add(sql: str, rows: int, seconds: float) -> None:
    s = _stats.setdefault(_key(sql), [0, 0, 0.0])
    s[0] += 1
    s[1] += rows
    s[2] += seconds


class _Timed(sqlite3.Connection):
    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        started = time.thread_time()
        cur = super().execute(sql, parameters)
        _add(sql, 0, time.thread_time() - started)
        return cur

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        rows = list(parameters)
        started = time.thread_time()
        cur = super().executemany(sql, rows)
        _add(sql, len(rows), time.thread_time() - started)
        return cur


def _dump(out: str) -> None:
    if sys.argv[1:2] != ["crawl"]:
        return
    data = {"cpu": time.process_time(), "statements": _stats}
    with open(out, "w") as f:
        json.dump(data, f)


if _OUT:
    _connect = sqlite3.connect

    def _timed_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        kwargs.setdefault("factory", _Timed)
        conn: sqlite3.Connection = _connect(*args, **kwargs)
        return conn

    sqlite3.connect = _timed_connect  # type: ignore[assignment]
    atexit.register(_dump, _OUT)
