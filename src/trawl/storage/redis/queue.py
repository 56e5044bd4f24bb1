"""The parse queue as a Redis Stream: an entry per fetched page, deleted when acked.

``put`` takes its sequence number from a counter at once (``INCR``: numbers only
grow, across every worker) and keeps the job here; the commit appends it to the
stream (once: the ``ids`` hash maps a number to its entry, so a commit sent twice
appends nothing twice). ``ack`` waits for the commit too, and is sent after the
commit's outputs, so an entry leaves only once what its parse produced is stored.
"""

from __future__ import annotations

from typing import Any

from trawl.jobs import ParseJob
from trawl.storage.redis.conn import Conn, Pipe
from trawl.storage.redis.keys import Keys, text

# KEYS stream, ids; ARGV seq, job.
PUT = r"""
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
local id = redis.call('XADD', KEYS[1], '*', 'seq', ARGV[1], 'job', ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], id)
return 1
"""

# KEYS stream, ids; ARGV seqs.
ACK = r"""
for i = 1, #ARGV do
  local id = redis.call('HGET', KEYS[2], ARGV[i])
  if id then
    redis.call('XDEL', KEYS[1], id)
    redis.call('HDEL', KEYS[2], ARGV[i])
  end
end
return 0
"""

_CHUNK = 1000


def _entries(conn: Conn, keys: Keys) -> list[tuple[int, bytes]]:
    """Every committed, unacknowledged entry as ``(seq, job)``, by seq."""
    out: list[tuple[int, bytes]] = []
    start = "-"
    while True:
        rows: list[Any] = conn.call("XRANGE", keys.stream, start, "+", "COUNT", _CHUNK)
        for _id, fields in rows:
            f = (
                {text(k): v for k, v in fields.items()}
                if isinstance(fields, dict)
                else dict(zip(map(text, fields[::2]), fields[1::2], strict=True))
            )
            out.append((int(text(f["seq"]) or 0), f["job"]))
        if len(rows) < _CHUNK:
            break
        start = "(" + (text(rows[-1][0]) or "")
    out.sort(key=lambda e: e[0])
    return out


def backlog(conn: Conn, keys: Keys) -> int:
    return int(conn.call("XLEN", keys.stream))


class RedisParseQueue:
    """The ParseQueue protocol: committed entries in the stream, new ones buffered here."""

    def __init__(self, conn: Conn, keys: Keys) -> None:
        self._conn = conn
        self._keys = keys
        self.drop()

    def drop(self) -> None:
        self._puts: dict[int, ParseJob] = {}
        self._acks: set[int] = set()

    def put(self, job: ParseJob) -> int:
        seq = int(self._conn.call("INCR", self._keys.stream_seq))
        self._puts[seq] = job
        return seq

    def pending(self, *, after: int = 0, limit: int = 1000) -> list[tuple[int, ParseJob]]:
        out: list[tuple[int, ParseJob]] = []
        for seq, job in _entries(self._conn, self._keys):
            if len(out) >= limit:
                return out
            if seq > after and seq not in self._acks:
                out.append((seq, ParseJob.load(job)))
        for seq, parse_job in self._puts.items():
            if len(out) >= limit:
                break
            if seq > after:
                out.append((seq, parse_job))
        return out

    def ack(self, seq: int) -> None:
        if self._puts.pop(seq, None) is None:
            self._acks.add(seq)

    def __len__(self) -> int:
        committed = backlog(self._conn, self._keys)
        if self._acks:
            ids = self._conn.call("HMGET", self._keys.stream_ids, *sorted(self._acks))
            committed -= sum(1 for i in ids if i is not None)
        return committed + len(self._puts)

    def flush_puts(self, pipe: Pipe) -> None:
        for seq, job in self._puts.items():
            pipe.script(
                PUT, [self._keys.stream, self._keys.stream_ids], [str(seq), job.dump().decode()]
            )
        self._puts = {}

    def flush_acks(self, pipe: Pipe) -> None:
        if self._acks:
            pipe.script(
                ACK,
                [self._keys.stream, self._keys.stream_ids],
                [str(s) for s in sorted(self._acks)],
            )
        self._acks = set()
