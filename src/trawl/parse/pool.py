"""The parse workers: processes that take jobs over a pipe each, read by the event loop.

``ProcessPoolExecutor`` cost a page about half a CPU-millisecond in the crawl process
and its workers besides the parse itself (measured on 42 KB pages): a manager thread
and a queue feeder thread in the crawl process, handing each job and result across
threads (GIL hand-offs, semaphores, a wake-up pipe), and locked queues in the
workers. Here each worker has one socket pair to the crawl process: a job is written
to the worker's socket as one frame (an 8-byte little-endian length, then the pickle
of ``(id, function, args)``), the worker answers with one frame ``(id, ok, value)``
(``value`` the result, or the exception raised), and the crawl process reads the
answers on its event loop (``asyncio.Protocol``): no thread, no lock.

A worker holds at most ``DEPTH`` jobs (one under way, the next ones waiting in its
socket, so that it does not idle while the event loop is busy elsewhere); the others
wait here, in order, as Python objects, and go to the first worker with room: the
socket's buffer (and the transport's, whose every send moves what is left) stays
small, and a slow page holds up few others. A worker
that dies (its socket closes) fails the jobs it held with ``BrokenProcessPool``, as
the executor did, and another is started in its place; ``shutdown`` with
``cancel_futures`` fails every job left. The parse role tries each page that failed
so once more (``parse/role.py``).

A worker is a new interpreter (``python -P -m trawl.parse.worker FD``: the socket passed
as a descriptor, this process's ``sys.path`` given to it as ``PYTHONPATH``, the
initializer its first frame), not a child of multiprocessing's forkserver: a crawl then
has no forkserver process nor resource tracker (14 and 13 MB), and a worker imports only
``parse/worker.py`` and the parser. Its command line is short and plain, for ``ps`` and
for profilers (py-spy's raw stacks split frames at ``;``, which a ``-c`` line had).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import socket
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar, cast

from trawl.parse.worker import HEADER, frame

__all__ = ["ParsePool"]

T = TypeVar("T")
DEPTH = 4  # jobs a worker holds: one under way, the next ones ready in its socket


# -- the crawl process's side ----------------------------------------------------------


class _Worker(asyncio.Protocol):
    """One worker process and its socket, as the event loop sees them."""

    def __init__(
        self, process: subprocess.Popen[bytes], sock: socket.socket, pool: ParsePool
    ) -> None:
        self.process = process
        self.sock = sock
        self.pool = pool
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self.transport: asyncio.Transport | None = None
        self._buf = bytearray()
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A socket's transport (uvloop's is no subclass of asyncio.Transport).
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        buf = self._buf
        buf += data
        while len(buf) >= HEADER.size:
            (n,) = HEADER.unpack_from(buf)
            end = HEADER.size + n
            if len(buf) < end:
                return
            job_id, ok, value = pickle.loads(memoryview(buf)[HEADER.size : end])
            del buf[:end]
            future = self.waiting.pop(job_id, None)
            if future is None or future.done():  # cancelled meanwhile
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)
        self.pool.dispatch()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.fail(BrokenProcessPool("a parse worker ended abruptly"))
        self.pool.replace_dead()

    def fail(self, error: BaseException) -> None:
        waiting, self.waiting = self.waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(error)


def _launch(sock: socket.socket) -> subprocess.Popen[bytes]:
    """A worker process on ``sock`` (its descriptor passed, the rest closed). A fork and
    exec, some milliseconds once a worker: not worth a thread. ``-P`` keeps the working
    directory off its path: it imports from this process's path, in this order."""
    fd = sock.fileno()
    path = os.pathsep.join(entry or os.getcwd() for entry in sys.path)
    env = {**os.environ, "PYTHONPATH": path}
    command = [sys.executable, "-P", "-m", "trawl.parse.worker", str(fd)]
    return subprocess.Popen(command, pass_fds=(fd,), stdin=subprocess.DEVNULL, env=env)


def _reap(processes: list[subprocess.Popen[bytes]]) -> None:
    """Wait for ended (or ending: their sockets are closed) workers in a thread of its
    own, so none is left a zombie nor its ``Popen`` collected while it runs."""
    running = [p for p in processes if p.poll() is None]
    if running:
        threading.Thread(
            target=lambda: [p.wait() for p in running], name="trawl-parse-reaper", daemon=True
        ).start()


class ParsePool:
    """``workers`` processes, each running ``initializer`` (picklable) first. Use from
    one event loop."""

    def __init__(self, workers: int, *, initializer: Callable[[], object] | None = None) -> None:
        if workers < 1:
            raise ValueError("a pool has at least one worker")
        self._count = workers
        self._initializer = initializer
        self._workers: list[_Worker] = []
        self._queue: deque[tuple[int, asyncio.Future[Any], Callable[..., Any], tuple[Any, ...]]]
        self._queue = deque()
        self._next_id = 0
        self._shut = False
        self._starting: asyncio.Lock | None = None
        self._restart: asyncio.Task[None] | None = None

    async def _start(self) -> None:
        """Start workers up to the count (at first, and in place of dead ones)."""
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            dead = [w for w in self._workers if w.closed]
            for worker in dead:
                self._workers.remove(worker)
            _reap([w.process for w in dead])
            for _ in range(self._count - len(self._workers)):
                await self._start_one()

    async def _start_one(self) -> None:
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair()
        with theirs:  # the worker holds its end: its exit closes ours
            process = _launch(theirs)
        # Its first frame, small enough for the socket's buffer: no wait.
        ours.sendall(frame(self._initializer))
        try:
            _transport, worker = await loop.connect_accepted_socket(
                lambda: _Worker(process, ours, self), ours
            )
        except BaseException:
            ours.close()  # the worker sees its socket end, and exits
            _reap([process])
            raise
        self._workers.append(worker)

    def replace_dead(self) -> None:
        """A worker died: start another (and give it the jobs waiting)."""
        if self._shut or (self._restart is not None and not self._restart.done()):
            return

        async def restart() -> None:
            await self._start()
            self.dispatch()

        self._restart = asyncio.get_running_loop().create_task(restart())

    def dispatch(self) -> None:
        """Send waiting jobs to the workers with room."""
        queue = self._queue
        while queue:
            room = [w for w in self._workers if not w.closed and len(w.waiting) < DEPTH]
            if not room:
                return
            worker = min(room, key=lambda w: len(w.waiting))
            job_id, future, fn, args = queue.popleft()
            if future.done():  # cancelled while it waited
                continue
            worker.waiting[job_id] = future
            assert worker.transport is not None
            worker.transport.write(frame((job_id, fn, args)))

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a worker (both picklable); raises what it raised, or
        ``BrokenProcessPool`` when the worker died or the pool was shut down."""
        if self._shut:
            raise BrokenProcessPool("the parse pool is shut down")
        if not self._workers:
            # Shielded: a job cancelled meanwhile must not leave a worker started but
            # not held (it would run on, unknown to the pool, until collected).
            await asyncio.shield(self._start())
        self._next_id += 1
        job_id = self._next_id
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.append((job_id, future, fn, args))
        self.dispatch()
        return await future

    def shutdown(self, *, wait: bool, cancel_futures: bool = False) -> None:
        """Close every worker's socket (it exits at its end); jobs still in flight
        fail with BrokenProcessPool if ``cancel_futures`` (else they are lost too:
        nobody reads their answers)."""
        self._shut = True
        if self._restart is not None:
            self._restart.cancel()
        if cancel_futures:
            error = BrokenProcessPool("the parse pool was shut down")
            while self._queue:
                future = self._queue.popleft()[1]
                if not future.done():
                    future.set_exception(error)
        for worker in self._workers:
            if cancel_futures:
                worker.fail(BrokenProcessPool("the parse pool was shut down"))
            if worker.transport is not None:
                worker.transport.abort()
            # Closed now, not at the loop's next turn (which a wait would block): the
            # worker sees the end of its socket and exits. Shut down first: a loop that
            # holds a duplicate of the descriptor (uvloop) would keep it open until then.
            with contextlib.suppress(OSError):
                worker.sock.shutdown(socket.SHUT_RDWR)
            worker.sock.close()
        if wait:
            for worker in self._workers:
                worker.process.wait()
        else:
            _reap([w.process for w in self._workers])

    @property
    def pids(self) -> list[int]:
        """The workers' process ids (started ones)."""
        return [w.process.pid for w in self._workers]
