"""The Redis frontier's later-stage writes: outcomes, revisits, host demotions.

``set_status`` and ``revisit`` are acknowledgements (script ``SET_STATUS``, the URL's
record as it was kept in the session's undo hash until the commit). The script also
answers the host's state, kept a moment for the ``host_info`` that follows a parse's
outcome (the host duplicate feedback), so it costs no round trip of its own.
"""

from __future__ import annotations

import time
from typing import Any

from trawl.models import HostInfo, UrlStatus
from trawl.storage.reasons import one_line
from trawl.storage.redis import lua
from trawl.storage.redis.frontier_read import first_score
from trawl.storage.redis.frontier_upkeep import FrontierUpkeep
from trawl.storage.redis.keys import NONE, arg, num, text

_HOST_FRESH = 1.0  # seconds a host's state answered by a script stands for a fresh read


def _status(value: object) -> UrlStatus:
    return UrlStatus(int(text(value) or 0))


class FrontierOutcomes(FrontierUpkeep):
    """Later stages' outcomes and host demotions."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._host_seen: tuple[str, HostInfo, float] | None = None

    def _later(self, host: str, args: list[str]) -> list[Any]:
        pipe = self._conn.pipeline()
        pipe.call("SADD", self._keys.session(self._session), host)
        pipe.script(lua.SET_STATUS, self._host_keys(host, undo=True), args)
        answer: list[Any] = pipe.execute()[1]
        next_at, admitted, budget, priority, demoted, holder, queued = answer[:7]
        info = HostInfo(
            host=host,
            next_at=num(next_at) or 0.0,
            queued=int(queued),
            admitted=int(admitted or 0),
            budget=None if budget is None else int(budget),
            priority=int(priority or 0),
            demoted_reason=text(demoted),
            in_flight=bool(holder),
        )
        self._host_seen = (host, info, time.monotonic())
        answer = answer[7:]
        if len(answer) == 2 and text(answer[0]) != "active":
            self.changed.add(host)
        return answer

    def host_info(self, host: str) -> HostInfo | None:
        seen, self._host_seen = self._host_seen, None
        if seen is not None and seen[0] == host and time.monotonic() - seen[2] < _HOST_FRESH:
            return seen[1]  # as the outcome just written left it
        return super().host_info(host)

    def set_status(
        self, host: str, fp: int, status: UrlStatus, *, reason: str | None = None
    ) -> None:
        answer = self._later(
            host, [arg(fp), "s", str(int(status)), arg(one_line(reason)), NONE, NONE, "0"]
        )
        if not answer:
            return
        if text(answer[0]) == "active":
            raise ValueError(f"set_status is for finished URLs, not {_status(answer[1]).label}")
        self._counts([(answer[0], answer[1])])

    def revisit(self, host: str, fp: int, *, due: float, interval: float, shift: int = 0) -> None:
        answer = self._later(
            host, [arg(fp), "v", NONE, NONE, arg(due), arg(interval), str(int(shift))]
        )
        if not answer:
            return
        self._look_stale = True
        self._conn.later(
            "ZADD", self._keys.waiting(self._keys.bucket_of(host)), "LT", arg(due), host
        )
        self._counts([(answer[0], answer[1])])

    def demote_host(self, host: str, *, priority: int, budget: int | None, reason: str) -> None:
        k = self._keys.host(host)
        pipe = self._conn.pipeline()
        pipe.call("HMGET", k.host, "priority", "budget")
        pipe.call("ZRANGE", k.queue, 0, 0, "WITHSCORES")
        stored, top = pipe.execute()
        prio = max(int(stored[0] or 0), priority)
        head = int(first_score(top)) if top else 0
        fields: list[str] = ["priority", str(prio), "demoted", one_line(reason) or ""]
        if budget is not None:
            old = num(stored[1])
            fields += ["budget", str(budget if old is None else min(int(old), budget))]
        b = self._keys.bucket_of(host)
        pipe = self._conn.pipeline()
        pipe.call("HSET", k.host, *fields)
        pipe.call("SADD", self._keys.hosts(b), host)
        # The host's order among due hosts: its best queued key plus its priority.
        pipe.call("HSET", self._keys.priorities(b), host, str(prio + head))
        pipe.execute()
