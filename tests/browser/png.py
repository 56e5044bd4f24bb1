"""A tiny PNG reader (8-bit RGB/RGBA, no interlace): enough to check a screenshot."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import numpy.typing as npt

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def read_png(data: bytes) -> npt.NDArray[np.uint8]:
    """The pixels of ``data`` as an array of shape (height, width, channels)."""
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG file")
    pos, idat, header = len(SIGNATURE), bytearray(), b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    channels = {2: 3, 6: 4}.get(color)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {color}")
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    out = np.zeros((height, stride), dtype=np.int32)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = np.frombuffer(raw, np.uint8, stride, start + 1).astype(np.int32)
        if kind == 0:
            cur = line
        elif kind == 1:
            cur = np.cumsum(line.reshape(width, channels), axis=0).reshape(stride) & 0xFF
        elif kind == 2:
            cur = (line + prev) & 0xFF
        else:
            cur = _unfilter_slow(kind, line, prev, channels)
        out[y] = cur
        prev = cur
    return out.astype(np.uint8).reshape(height, width, channels)


def _unfilter_slow(
    kind: int, line: npt.NDArray[np.int32], prev: npt.NDArray[np.int32], bpp: int
) -> npt.NDArray[np.int32]:
    cur = line.copy()
    for i in range(len(cur)):
        left = int(cur[i - bpp]) if i >= bpp else 0
        up = int(prev[i])
        if kind == 1:
            pred = left
        elif kind == 3:
            pred = (left + up) // 2
        elif kind == 4:
            upleft = int(prev[i - bpp]) if i >= bpp else 0
            p = left + up - upleft
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - upleft)
            pred = left if pa <= pb and pa <= pc else (up if pb <= pc else upleft)
        else:
            raise ValueError(f"bad PNG filter {kind}")
        cur[i] = (int(cur[i]) + pred) & 0xFF
    return cur
