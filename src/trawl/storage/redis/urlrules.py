"""``UrlRuleStore`` in Redis: each host's learned URL equivalences on the host's shard.

Keys (``P`` = ``trawl:<crawl>:``, all of one host under its hash tag): ``P x:{host}``
hash rule key -> ``<state>|<body>``; ``P x:{host}:n`` hash rule key -> URLs rewritten
(``HINCRBY``: many workers' counts add up); ``P x:{host}:log`` hash ``<key>\\n<url>``
-> ``[target, depth, skipped]``; and the crawl-wide set ``P {<crawl>/g}:rulehosts`` of
hosts with rules (for the reader's listing).

Writes wait in the process until the store's commit (``flush``), like the robots
store; reads see them over what is stored. A rule is saved by a script that keeps the
stored state when it is higher (another worker refuted or applied the rule meanwhile).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import orjson

from trawl.dedup.urlrules import Rewrite, UrlRule
from trawl.storage.redis.conn import Conn, Pipe
from trawl.storage.redis.keys import Keys, text

# KEYS: the host's rules hash. ARGV: rule key, state, body. Keeps a higher stored state.
SAVE_RULE = r"""
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur and tonumber(string.sub(cur, 1, 1)) > tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '|' .. ARGV[3])
return 1
"""
# KEYS: the host's log hash. ARGV: a rule key. Deletes that rule's entries.
FORGET = r"""
local prefix = ARGV[1] .. '\n'
local n = 0
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(field, 1, #prefix) == prefix then
    redis.call('HDEL', KEYS[1], field)
    n = n + 1
  end
end
return n
"""


def decode_rules(host: str, stored: dict[Any, Any], counts: dict[Any, Any]) -> list[UrlRule]:
    out = []
    for raw_key, raw in stored.items():
        key = text(raw_key) or ""
        state, _, body = (text(raw) or "").partition("|")
        out.append(UrlRule.load(host, key, int(state), body, int(counts.get(raw_key) or 0)))
    return sorted(out, key=lambda r: r.key)


class RedisUrlRuleStore:
    def __init__(self, conn: Conn, keys: Keys) -> None:
        self._conn, self._keys = conn, keys
        self.saves: dict[tuple[str, str], UrlRule] = {}
        self.counts: dict[tuple[str, str], int] = {}
        self.logs: dict[tuple[str, str, str], Rewrite] = {}
        self.forgets: set[tuple[str, str]] = set()

    @property
    def has_writes(self) -> bool:
        return bool(self.saves or self.counts or self.logs or self.forgets)

    def rules(self, host: str) -> list[UrlRule]:
        k = self._keys.rules(host)
        pipe = self._conn.pipeline()
        pipe.call("HGETALL", k)
        pipe.call("HGETALL", k + ":n")
        stored, counts = pipe.execute()
        rules = {r.key: r for r in decode_rules(host, stored, counts)}
        for (h, key), rule in self.saves.items():
            if h == host:
                old = rules.get(key)
                rules[key] = rule if old is None else old.merged(rule)
        for (h, key), n in self.counts.items():
            if h == host and key in rules:
                rules[key] = replace(rules[key], rewrites=rules[key].rewrites + n)
        return [rules[key] for key in sorted(rules)]

    def save(self, rule: UrlRule) -> None:
        name = (rule.host, rule.key)
        old = self.saves.get(name)
        self.saves[name] = rule if old is None else old.merged(rule)

    def count(self, host: str, key: str, n: int) -> None:
        if n:
            self.counts[(host, key)] = self.counts.get((host, key), 0) + n

    def log(self, rewrites: Sequence[Rewrite]) -> None:
        for r in rewrites:
            self.logs[(r.host, r.key, r.url)] = r

    def logged(self, host: str, key: str) -> list[Rewrite]:
        found: dict[str, Rewrite] = {}
        if (host, key) not in self.forgets:
            prefix = key + "\n"
            for field, raw in self._conn.call("HGETALL", self._keys.rules(host) + ":log").items():
                name = text(field) or ""
                if name.startswith(prefix):
                    target, depth, skipped = orjson.loads(raw)
                    url = name[len(prefix) :]
                    found[url] = Rewrite(host, key, url, target, int(depth), bool(skipped))
        for (h, k, url), r in self.logs.items():
            if (h, k) == (host, key):
                found[url] = r
        return list(found.values())

    def forget(self, host: str, key: str) -> None:
        self.forgets.add((host, key))
        for name in [n for n in self.logs if n[:2] == (host, key)]:
            del self.logs[name]

    def flush(self, pipe: Pipe) -> None:
        hosts: set[str] = set()
        for (host, key), rule in self.saves.items():
            hosts.add(host)
            pipe.script(SAVE_RULE, [self._keys.rules(host)], [key, int(rule.state), rule.body()])
        for (host, key), n in self.counts.items():
            pipe.call("HINCRBY", self._keys.rules(host) + ":n", key, n)
        for host, key in self.forgets:
            pipe.script(FORGET, [self._keys.rules(host) + ":log"], [key])
        for (host, key, url), r in self.logs.items():
            value = orjson.dumps([r.target, r.depth, r.skipped]).decode()
            pipe.call("HSET", self._keys.rules(host) + ":log", f"{key}\n{url}", value)
        if hosts:
            pipe.call("SADD", self._keys.rule_hosts, *sorted(hosts))
        self.saves, self.counts, self.logs, self.forgets = {}, {}, {}, set()


def read_rules(conn: Conn, keys: Keys, hosts: Iterable[str], *, batch: int = 500) -> list[UrlRule]:
    """The stored rules of ``hosts`` (a reader's view: what was committed), ``batch``
    hosts a round trip."""
    out: list[UrlRule] = []
    ordered = sorted(hosts)
    for start in range(0, len(ordered), batch):
        chunk = ordered[start : start + batch]
        pipe = conn.pipeline()
        for host in chunk:
            pipe.call("HGETALL", keys.rules(host))
            pipe.call("HGETALL", keys.rules(host) + ":n")
        answers = pipe.execute()
        for i, host in enumerate(chunk):
            out += decode_rules(host, answers[2 * i], answers[2 * i + 1])
    return out
