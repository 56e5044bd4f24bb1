"""The zstd side of content decoding: a bounded sink, and a follower of frame headers.

zstandard's streaming decompressor (``stream_writer``) writes its output to a sink
in pieces of at most 128 KiB; :class:`Sink` keeps the budget and raises
:class:`SinkFullError` past it, which stops the decoder in the middle of a bomb. The decoder
does not say whether the input ended on a frame boundary; :class:`FrameEnds` tells.
"""

from __future__ import annotations

from typing import Final

import zstandard

__all__ = ["ZSTD_MAX_WINDOW", "FrameEnds", "Sink", "SinkFullError", "is_zstd_start"]

#: RFC 9659: a zstd content coding needs no window past 8 MB; larger ones are refused.
ZSTD_MAX_WINDOW: Final = 8 * 1024 * 1024
_MAGIC: Final = b"\x28\xb5\x2f\xfd"


def is_zstd_start(head: bytes) -> bool:
    """Starts like a zstd frame, or a skippable one (magic 0x184D2A50 to 0x184D2A5F)."""
    return head.startswith(_MAGIC) or (head[1:4] == b"\x2a\x4d\x18" and head[0] >> 4 == 5)


class SinkFullError(Exception):
    """Raised by the zstd sink to stop the decoder: the budget is spent."""


class Sink:
    """Where zstd writes: keeps at most ``room`` bytes, then stops the decoder."""

    __slots__ = ("parts", "room")

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.room = 0

    def write(self, data: bytes) -> int:
        if len(data) > self.room:
            self.parts.append(data[: self.room])
            self.room = 0
            raise SinkFullError
        self.parts.append(data)
        self.room -= len(data)
        return len(data)


class FrameEnds:
    """Tells whether a zstd stream ended on a frame boundary: a second decoder, whose
    output is dropped, is given each chunk after the bounded one decoded it within
    the budget (so its output is just as bounded), and says where frames end."""

    __slots__ = ("_dctx", "_frame", "frames")

    def __init__(self) -> None:
        self._dctx = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
        self._frame: zstandard.ZstdDecompressionObj | None = None  # inside one
        self.frames = 0

    @property
    def complete(self) -> bool:
        return self.frames > 0 and self._frame is None

    def feed(self, data: bytes) -> None:
        while data:
            if self._frame is None:
                self._frame = self._dctx.decompressobj()
            self._frame.decompress(data)
            if not self._frame.eof:
                return
            data = self._frame.unused_data
            self._frame = None
            self.frames += 1
