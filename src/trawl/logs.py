"""Log lines for `trawl crawl` and `trawl serve`: JSON when stderr is not a terminal.

Every line carries the crawl id of the code that logged it. The id lives in a
``ContextVar`` (set once in a crawl's process, or per task in the server), so no
module keeps a mutable global of its own; handlers belong to the logging module.
"""

from __future__ import annotations

import logging
import sys
import time
from contextvars import ContextVar
from typing import Any, TextIO

import orjson

CRAWL_ID: ContextVar[str | None] = ContextVar("trawl_crawl_id", default=None)

# Attributes every LogRecord has; anything else passed in ``extra`` is a field.
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in record.__dict__.items() if k not in _STANDARD}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, crawl, extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        crawl = getattr(record, "crawl", None) or CRAWL_ID.get()
        if crawl is not None:
            out["crawl"] = crawl
        for key, value in _fields(record).items():
            out.setdefault(key, value)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(out, default=str).decode()


class TextFormatter(logging.Formatter):
    """For a person at a terminal: time, level, [crawl], message, key=value fields."""

    def format(self, record: logging.LogRecord) -> str:
        crawl = getattr(record, "crawl", None) or CRAWL_ID.get()
        extra = " ".join(f"{k}={v}" for k, v in _fields(record).items() if k != "crawl")
        head = time.strftime("%H:%M:%S", time.localtime(record.created))
        parts = [head, record.levelname.lower()]
        if crawl:
            parts.append(f"[{crawl}]")
        parts.append(record.getMessage())
        if extra:
            parts.append(extra)
        text = " ".join(parts)
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def setup_logging(
    stream: TextIO | None = None, *, json: bool | None = None, level: int = logging.INFO
) -> logging.Handler:
    """Send the ``trawl`` loggers to ``stream`` (stderr); JSON unless it is a terminal."""
    out = stream or sys.stderr
    use_json = not out.isatty() if json is None else json
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter() if use_json else TextFormatter())
    logger = logging.getLogger("trawl")
    for old in list(logger.handlers):
        logger.removeHandler(old)
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    return handler
