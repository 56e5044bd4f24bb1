"""The text output: one JSON record per kept page, in rotating ``.jsonl.gz`` files.

Each record is its own gzip member holding one JSON line, so a file is readable with
``zcat`` or any gzip reader at every moment, a record can be read alone from its
location, and a crash cuts the file back to whole records (see ``SegmentWriter`` of the blob store).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from trawl.archive.gz import gunzip, gzip_member
from trawl.models import Location
from trawl.storage.blobs import SegmentWriter


class TextStore:
    """Appends text records; reads them back one at a time."""

    def __init__(self, log: SegmentWriter) -> None:
        self._log = log

    def append(self, record: dict[str, Any]) -> Location:
        line = orjson.dumps(record) + b"\n"
        return self._log.append(gzip_member(line))

    def read(self, location: Location) -> dict[str, Any]:
        return decode_record(self._log.read(location), location)


def decode_record(data: bytes, location: Location) -> dict[str, Any]:
    """The text record in ``data``, the gzip member read from ``location``."""
    value = orjson.loads(gunzip(data))
    if not isinstance(value, dict):
        raise ValueError(f"{location.file}@{location.offset}: not a text record")
    return value


def read_text_files(files: list[Path]) -> Iterator[dict[str, Any]]:
    for path in files:
        with gzip.open(path, "rb") as f:
            for line in f:
                if line.strip():
                    yield orjson.loads(line)
