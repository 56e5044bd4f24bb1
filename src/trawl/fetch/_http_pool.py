"""The HTTP client's connection pool, with a bound on the connections kept idle.

aiohttp's ``TCPConnector`` bounds the connections in use (``limit``), but keeps every
released one alive for its keep-alive time, one or more per host. A crawl contacts
thousands of hosts in that time: measured on 4,000 hosts, the crawl process held 4,003
sockets, each a file descriptor and some 8 KB of its memory (bounded: 30 MB less). Here the
connections kept idle are at most ``max_idle``: releasing one more closes the one left
idle longest (least recently used first). A host fetched again soon (its next turn
after the crawl delay) still finds its connection.

This reaches into two of aiohttp's connector methods (``_get`` and ``_release``, and
its ``_conns`` pool); ``tests/unit/test_http_pool.py`` checks them against the aiohttp
installed.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import aiohttp
from aiohttp.client_proto import ResponseHandler

__all__ = ["IdleBoundedConnector"]


class IdleBoundedConnector(aiohttp.TCPConnector):
    """A ``TCPConnector`` that keeps at most ``max_idle`` connections idle."""

    def __init__(self, *, max_idle: int, **kwargs: Any) -> None:
        if max_idle < 0:
            raise ValueError("max_idle must be 0 or more")
        super().__init__(**kwargs)
        self._max_idle = max_idle
        # Idle connections, least recently released first: protocol -> its pool key.
        self._idle: OrderedDict[ResponseHandler, Any] = OrderedDict()

    @property
    def idle(self) -> int:
        """Connections kept idle now (some may have been closed by their peer)."""
        return len(self._idle)

    async def _get(self, key: Any, traces: list[Any]) -> Any:
        connection = await super()._get(key, traces)
        if connection is not None and connection.protocol is not None:  # reused
            self._idle.pop(connection.protocol, None)
        # Those aiohttp found closed or expired, or its keep-alive cleanup closed, stay
        # listed until the bound reaches them (closing them again does nothing).
        return connection

    def _release(self, key: Any, protocol: ResponseHandler, *, should_close: bool = False) -> None:
        super()._release(key, protocol, should_close=should_close)
        pooled = self._conns.get(key)
        if pooled and pooled[-1][0] is protocol:  # kept for reuse
            self._idle[protocol] = key
            self._idle.move_to_end(protocol)
        while len(self._idle) > self._max_idle:
            oldest, its_key = self._idle.popitem(last=False)
            conns = self._conns.get(its_key)
            if conns is None:
                continue
            for entry in conns:
                if entry[0] is oldest:
                    conns.remove(entry)
                    break
            else:
                continue  # reused or cleaned up already
            if not conns:
                del self._conns[its_key]
            oldest.close()
