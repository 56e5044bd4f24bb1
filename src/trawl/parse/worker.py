"""A parse worker process: a light module, so a worker costs little.

A worker of the parse role's pool (``parse/pool.py``) runs ``main``, with
``init_worker`` first, and so imports this module and the parser, nothing more. When
the initializer lived in the parse role's module, every worker imported the parse
role and what it imports (the HTTP client, the stages): 0.36 CPU-seconds a worker
instead of 0.12, two or more per crawl process.
"""

from __future__ import annotations

import pickle
import signal
import socket
import struct

from trawl import memory
from trawl.dedup import minhash
from trawl.parse.page import PageInput, ParseOptions, parse_page

__all__ = ["HEADER", "frame", "init_worker", "main"]

HEADER = struct.Struct("<Q")  # a frame: its length, then a pickle


def frame(value: object) -> bytes:
    data = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


def _read_exact(sock: socket.socket, n: int) -> bytearray | None:
    """``n`` bytes, or None at the end of the stream (the crawl process is gone)."""
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            return None
        got += k
    return buf  # not copied: a frame may hold a body of 10 MiB


def _read_frame(sock: socket.socket) -> bytearray | None:
    """One frame's pickle, or None at the end of the stream (or a broken socket)."""
    try:
        head = _read_exact(sock, HEADER.size)
        return None if head is None else _read_exact(sock, HEADER.unpack(head)[0])
    except OSError:  # as the end of the stream
        return None


def main(fd: int) -> None:
    """A worker's life, started by the pool (``python -m trawl.parse.worker FD``, see
    ``parse/pool.py``) on socket ``fd``: its first frame is the initializer (or None),
    run first; then the jobs (frames of ``(id, function, args)``) run one at a time,
    each answered with a frame of ``(id, ok, result or exception)``, until the socket
    closes."""
    sock = socket.socket(fileno=fd)
    body = _read_frame(sock)
    if body is None:
        return
    initializer = pickle.loads(body)
    if initializer is not None:
        initializer()
    while (body := _read_frame(sock)) is not None:
        job_id, fn, args = pickle.loads(body)
        # The frame's copy of the page is not kept while the page is parsed.
        del body
        try:
            reply = frame((job_id, True, fn(*args)))
        except BaseException as exc:  # the caller gets it, as from an executor
            try:
                reply = frame((job_id, False, exc))
            except Exception:  # an exception that does not pickle
                reply = frame((job_id, False, RuntimeError(repr(exc))))
        try:
            sock.sendall(reply)
        except OSError:  # the crawl process closed its end (shut down, or gone)
            return


def init_worker(coefficients: tuple[int, int, bytes, bytes] | None = None) -> None:
    """Warm a parse worker: the parser's tables loaded once, and the near-duplicate
    scheme's ``coefficients`` (``MinHasher.coefficients()``) taken from the crawl
    process, which derived them with numpy: the worker does not load it.

    Ctrl-C is the crawl process's business: a terminal sends SIGINT to the whole
    process group, and a worker that took it would die with a KeyboardInterrupt
    traceback mid-page; the crawl process stops the pool itself (closing the
    workers' sockets). SIGTERM keeps its default.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if coefficients is not None:
        minhash.preset(coefficients)
    memory.limit_arenas(mmap_threshold=memory.WORKER_MMAP_THRESHOLD)  # not the crawl's
    parse_page(
        PageInput("http://warm.invalid/", (), b"<p>warming up this worker</p>"), ParseOptions()
    )


if __name__ == "__main__":  # python -m trawl.parse.worker FD, started by the pool
    import sys

    # The module by its own name, not this ``__main__`` copy: what the initializer and
    # the jobs name (pickled by reference) is then the module that serves them.
    from trawl.parse.worker import main as _main

    _main(int(sys.argv[1]))
