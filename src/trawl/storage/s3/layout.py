"""How a log lies in a bucket: whole segments, and the growing one as parts.

S3 objects are immutable, so a segment still being appended to is published at each
commit as a *part*: one object holding what was appended since the last one,
``<log>/<segment>.parts/<start offset, 16 digits>``. When the segment rotates (or its
writer closes) the whole segment is uploaded once as ``<log>/<segment>`` from the
writer's spool file and its parts are deleted. A commit thus costs one PUT per log that
grew, of the bytes it grew by (not the segment again), and a finished segment is one
object, as a WARC reader expects.

A reader finds a byte of a segment in the whole object if it reaches that far, else
in the part that covers it. Parts never overlap and never contradict the whole object
on a committed byte: the writer's recovery rewrites the layout before it appends.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trawl.storage.blobs import LogSpec
from trawl.storage.s3.objects import ObjectInfo, S3Objects

PARTS = ".parts"


def whole_key(spec: LogSpec, segment: str) -> str:
    return f"{spec.name}/{segment}"


def parts_folder(spec: LogSpec, segment: str) -> str:
    return f"{spec.name}/{segment}{PARTS}"


def part_key(spec: LogSpec, segment: str, start: int) -> str:
    return f"{parts_folder(spec, segment)}/{start:016d}"


@dataclass
class SegmentLayout:
    """What the bucket holds of one segment."""

    whole: int | None = None  # size of the whole object, if there is one
    parts: dict[int, int] = field(default_factory=dict)  # start -> size

    @property
    def size(self) -> int:
        """The segment's length as stored (the whole object or the last part's end)."""
        ends = [start + size for start, size in self.parts.items()]
        return max([self.whole or 0, *ends])

    def pieces(self, start: int, end: int) -> list[tuple[int | None, int, int]]:
        """Where bytes ``[start, end)`` lie: (part start or None for the whole object,
        first byte, end byte) in order; stops at the first gap."""
        out: list[tuple[int | None, int, int]] = []
        at = start
        if self.whole is not None and at < min(end, self.whole):
            out.append((None, at, min(end, self.whole)))
            at = min(end, self.whole)
        for p_start in sorted(self.parts):
            if at >= end:
                break
            p_end = p_start + self.parts[p_start]
            if p_start <= at < p_end:
                out.append((p_start, at, min(end, p_end)))
                at = min(end, p_end)
        return out


def scan_segment(
    objects: S3Objects, spec: LogSpec, segment: str, *, whole: bool = True
) -> SegmentLayout:
    """One segment as stored: a LIST of its parts and a HEAD of the whole object
    (``whole`` False: the caller just found there is none)."""
    layout = layouts(spec, objects.list_all(parts_folder(spec, segment))).get(
        spec.index_of(segment) or 0, SegmentLayout()
    )
    if whole:
        layout.whole = objects.size(whole_key(spec, segment))
    return layout


def scan_log(objects: S3Objects, spec: LogSpec) -> dict[int, SegmentLayout]:
    """Every segment of the log as stored: one level of ``<log>/`` (other writers'
    segments included, then left out), and the parts of those that have parts."""
    wholes, folders = objects.list_folder(spec.name)
    found = layouts(spec, wholes)
    for folder in folders:
        index = spec.index_of(folder.removeprefix(spec.name + "/").removesuffix(PARTS))
        if index is not None and folder.endswith(PARTS):
            parts = layouts(spec, objects.list_all(folder)).get(index, SegmentLayout()).parts
            if parts:
                found.setdefault(index, SegmentLayout()).parts.update(parts)
    return found


def layouts(spec: LogSpec, objects: list[ObjectInfo]) -> dict[int, SegmentLayout]:
    """The log's segments by index, from a listing of keys under ``<log>/``; keys of
    other logs or other writers' segment prefixes are left out."""
    found: dict[int, SegmentLayout] = {}
    for o in objects:
        rel = o.key.removeprefix(spec.name + "/")
        if rel == o.key:
            continue
        name, sep, rest = rel.partition("/")
        if sep:
            if not (name.endswith(PARTS) and rest.isdigit()):
                continue
            index = spec.index_of(name.removesuffix(PARTS))
            if index is not None:
                found.setdefault(index, SegmentLayout()).parts[int(rest)] = o.size
        else:
            index = spec.index_of(name)
            if index is not None:
                found.setdefault(index, SegmentLayout()).whole = o.size
    return found


def list_segments(objects: S3Objects, spec: LogSpec) -> list[str]:
    """Segment names, oldest first: the whole objects in ``<log>/`` and the growing
    segments' parts folders that hold a part (a service built on a file system, such
    as SeaweedFS, may list a folder whose parts were all deleted)."""
    wholes, folders = objects.list_folder(spec.name)
    indexes = set(layouts(spec, wholes))
    for folder in folders:
        index = spec.index_of(folder.removeprefix(spec.name + "/").removesuffix(PARTS))
        if (
            index is not None
            and index not in indexes
            and folder.endswith(PARTS)
            and layouts(spec, objects.list_all(folder)).get(index)
        ):
            indexes.add(index)
    return [spec.segment(i) for i in sorted(indexes)]
