"""Learned URL equivalences: which spellings of one host's URLs serve the same page.

Pure (no I/O, no clock): the rule records, the spellings a URL has, how active rules
rewrite a URL, and when a rule has seen enough. ``frontier/equivalences.py`` feeds it
with what the parse stage learns and keeps the rules in the store.

A rule is a key, one of:

- ``param:NAME``: the query parameter NAME never changes the page, whatever its value
  (a session id, a referrer tag the tracking list does not know);
- ``param:NAME=VALUE``: NAME with this one value does not (a flag such as ``amp=1``, a
  default such as ``lang=en`` whose other values may well choose another page);
- ``segment:amp``, ``segment:print``, ``segment:printable``: a copy under that path
  segment (``/amp/a/b``, ``/a/b/print/``) is the page without it;
- ``index:index.html`` (and the other names of ``INDEX_FILES``): a directory's index
  file is the directory (``/a/index.html`` is ``/a/``);
- ``slash``: a trailing slash does not matter; URLs are rewritten to the form the
  host's kept and canonical pages use (``prefer``: ``"/"`` or ``""``), but for an
  /amp/ or /print/ view whose own rule is not applied (its slash is the view's).

The last two apply to URLs without a query only: a URL with a query is answered by a
script at exactly that path (``/item?id=7`` is no ``/item/?id=7``). Parameters are
removed first, so ``/a?ref=x`` still becomes ``/a/``.

Evidence is a pair of URLs that differ only in what the rule removes and that the parse
stage found to be the same page (one names the other as rel=canonical, or its text is
an exact or near duplicate of the other's). A rule is applied once ``pages`` distinct
pages showed it (``Thresholds.pages``; each kept page counts once, so a host's soft 404
page, the same text under every URL, counts once) and, for ``param:NAME``, ``values``
different values were seen (``Thresholds.values``); names that usually choose the page
(``CONTENT_PARAMS``: page, id, q, lang, sort, ...) are never dropped whatever their
value, and a value of one needs twice the pages. One counterexample (two URLs that
differ only in what the rule removes and hold different pages, or a page whose
rel=canonical keeps it) refutes the rule for good.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import orjson
import xxhash

__all__ = [
    "CONTENT_PARAMS",
    "INDEX_FILES",
    "SEGMENTS",
    "Feature",
    "Rewrite",
    "RuleState",
    "Thresholds",
    "UrlRule",
    "applies",
    "can_apply",
    "chooses",
    "digest",
    "features",
    "pair_features",
    "ready",
    "rewrite",
    "wanted",
]

#: Directory index files: ``/a/index.html`` is ``/a/`` where the rule was learned.
INDEX_FILES: tuple[str, ...] = (
    *("index.html", "index.htm", "index.php", "index.asp", "index.aspx", "index.shtml"),
    *("index.jsp", "index.cfm", "default.htm", "default.html", "default.asp", "default.aspx"),
)
#: Path segments under which sites serve another rendering of the same page.
SEGMENTS: tuple[str, ...] = ("amp", "print", "printable")
#: Parameter names that usually choose what a page shows: never dropped whatever their
#: value (``param:NAME``); one value of them (``param:page=1``) needs twice the pages.
CONTENT_PARAMS: frozenset[str] = frozenset(
    {
        *("page", "paged", "pagenum", "pg", "offset", "start", "from", "skip", "limit"),
        *("per_page", "perpage", "count", "size", "id", "ids", "item", "itemid", "item_id"),
        *("product", "product_id", "productid", "pid", "sku", "article", "articleid"),
        *("article_id", "aid", "post", "postid", "post_id", "story", "storyid", "doc"),
        *("docid", "cat", "category", "categoryid", "catid", "tag", "tags", "topic"),
        *("section", "query", "search", "keyword", "keywords", "term", "sort", "sortby"),
        *("sort_by", "order", "orderby", "dir", "filter", "year", "month", "day", "date"),
        *("lang", "language", "locale", "hl", "ver", "version", "rev", "revision", "file"),
        *("path", "name", "title", "slug", "user", "uid", "action", "do", "mode", "tab"),
        *("view", "format", "type", "show", "region", "country", "city", "author"),
    }
)
EVIDENCE_CAP = 16  # distinct pages and values kept per rule (enough for any threshold)
MAX_PARAMS = 8  # parameters of one URL considered
MAX_VALUE = 24  # longer values get no rule of their own (session ids: param:NAME only)
MAX_NAME = 64  # a parameter with a longer name gets no rule at all


class RuleState(enum.IntEnum):
    """Where a rule stands; it only ever moves up (stored as the integer)."""

    CANDIDATE = 0  # some evidence, not enough
    ACTIVE = 1  # applied at admission
    REFUTED = 2  # a counterexample: never applied again

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Thresholds:
    pages: int = 4
    values: int = 3


@dataclass(frozen=True, slots=True)
class UrlRule:
    """One host's rule, with the evidence for it (digests, at most EVIDENCE_CAP each)."""

    host: str
    key: str
    state: RuleState = RuleState.CANDIDATE
    pages: tuple[str, ...] = ()  # distinct pages that showed it
    values: tuple[str, ...] = ()  # parameter values seen (param:NAME)
    votes: tuple[int, int] = (0, 0)  # slash: kept pages (with, without) a trailing slash
    prefer: str = ""  # slash: the form URLs are rewritten to ("/" or "")
    reason: str = ""  # why it was applied or refuted
    changed_at: float = 0.0
    rewrites: int = 0  # URLs it rewrote (kept by the store, added up)

    def body(self) -> str:
        """The stored form of everything but host, key, state and rewrites."""
        fields = [self.pages, self.values, self.votes, self.prefer, self.reason, self.changed_at]
        return orjson.dumps(fields).decode()

    @classmethod
    def load(cls, host: str, key: str, state: int, body: str | bytes, rewrites: int) -> UrlRule:
        pages, values, votes, prefer, reason, changed_at = orjson.loads(body)
        return cls(
            host,
            key,
            RuleState(int(state)),
            tuple(pages),
            tuple(values),
            (int(votes[0]), int(votes[1])),
            str(prefer),
            str(reason),
            float(changed_at),
            int(rewrites),
        )

    def merged(self, newer: UrlRule) -> UrlRule:
        """What a store keeps when ``newer`` is saved over this: a state never goes
        back (a refuted rule stays refuted, an active one active), the rewrites add up
        elsewhere (``UrlRuleStore.count``)."""
        if newer.state >= self.state:
            return replace(newer, rewrites=self.rewrites)
        return self

    @property
    def param(self) -> str | None:
        """The parameter name of a ``param:`` rule."""
        if not self.key.startswith("param:"):
            return None
        return self.key[6:].partition("=")[0]


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A URL a rule rewrote (kept, so that refuting the rule can give it back)."""

    host: str
    key: str
    url: str  # as found
    target: str  # what it became
    depth: int
    skipped: bool = False  # in the frontier already: finished as skipped at its lease


@dataclass(frozen=True, slots=True)
class Feature:
    """A spelling ``url`` has: removing it (rule ``key``) gives ``base``."""

    key: str
    base: str
    values: tuple[str, ...] = ()  # the parameter's values involved (param:NAME)
    vote: str | None = None  # slash: the form the other URL of a pair has


def digest(text: str) -> str:
    """A short stable digest (evidence is kept as digests, not URLs or values)."""
    return f"{xxhash.xxh32_intdigest(text.encode('utf-8', 'surrogatepass')):08x}"


# -- URL parts ------------------------------------------------------------------------


def _split(url: str) -> tuple[str, str, str | None]:
    """(``scheme://authority``, path, query or None) of a normal-form URL."""
    slash = url.find("/", url.find("//") + 2)
    if slash < 0:
        return url, "/", None
    rest = url[slash:]
    path, mark, query = rest.partition("?")
    return url[:slash], path, query if mark else None


def _join(head: str, path: str, query: str | None) -> str:
    return head + (path or "/") + ("" if query is None else "?" + query)


def _params(query: str | None) -> list[tuple[str, str]]:
    """(name, value) of each non-empty parameter (a bare name has the value "")."""
    if not query:
        return []
    out = []
    for part in query.split("&"):
        if part:
            name, _, value = part.partition("=")
            out.append((name, value))
    return out


def _without(query: str | None, drop: Iterable[str]) -> str | None:
    """The query without the parameters named in ``drop`` (None when nothing is left)."""
    names = set(drop)
    if query is None:
        return None
    kept = [p for p in query.split("&") if p and p.partition("=")[0] not in names]
    return "&".join(kept) or None


def _without_pair(query: str | None, name: str, value: str) -> str | None:
    if query is None:
        return None
    kept = [p for p in query.split("&") if p and p.partition("=")[::2] != (name, value)]
    return "&".join(kept) or None


def _last_segment(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _slash_toggles(path: str) -> bool:
    """Whether a trailing slash may be added to or removed from ``path``: not the root,
    and not a last segment with a dot (``/a.pdf/`` is no spelling of ``/a.pdf``)."""
    if path in ("", "/") or path.endswith("//"):
        return False
    return "." not in _last_segment(path)


def _toggle_slash(path: str) -> str:
    return path[:-1] if path.endswith("/") else path + "/"


def _drop_segment(path: str, segment: str) -> str:
    out = "/".join(p for p in path.split("/") if p != segment)
    if out.endswith("/") and not path.endswith("/") and len(out) > 1:
        out = out[:-1]
    return out or "/"


def _index_file(path: str) -> str | None:
    last = path.rsplit("/", 1)[-1].lower()
    return last if last in INDEX_FILES else None


# -- spellings ------------------------------------------------------------------------


def features(url: str) -> list[Feature]:
    """Every spelling ``url`` has, each with the URL that removing it gives."""
    head, path, query = _split(url)
    out: list[Feature] = []
    params = _params(query)
    if len(params) <= MAX_PARAMS:
        seen: set[str] = set()
        for name, value in params:
            if name in seen or len(name) > MAX_NAME:
                continue
            seen.add(name)
            base = _join(head, path, _without(query, [name]))
            values = tuple(v for n, v in params if n == name)
            out.append(Feature(f"param:{name}", base, values))
            if len(values) == 1 and len(value) <= MAX_VALUE:
                out.append(Feature(f"param:{name}={value}", base, values))
    for segment in SEGMENTS:
        if f"/{segment}/" in path or path.endswith(f"/{segment}"):
            base = _join(head, _drop_segment(path, segment), query)
            out.append(Feature(f"segment:{segment}", base))
    if query is None:  # a query goes to a script at exactly that path
        index = _index_file(path)
        if index is not None:
            out.append(Feature(f"index:{index}", _join(head, path[: path.rfind("/") + 1], None)))
        if _slash_toggles(path):
            out.append(Feature("slash", _join(head, _toggle_slash(path), None)))
    return out


def pair_features(url: str, other: str) -> list[Feature]:
    """The rules a pair of URLs of one page is evidence for: the spellings of either
    whose removal gives the other, or (query only, same path) the parameters in which
    the two differ, when dropping them all makes the URLs equal."""
    if url == other:
        return []
    found = [f for f in features(url) if f.base == other]
    found += [f for f in features(other) if f.base == url]
    out = list({f.key: f for f in reversed(found)}.values())[::-1]  # once per rule
    # A slash pair votes for the form of the URL the host keeps (``other``: the kept
    # copy or the canonical).
    vote = "/" if _split(other)[1].endswith("/") else ""
    out = [replace(f, vote=vote) if f.key == "slash" else f for f in out]
    head, path, query = _split(url)
    head2, path2, query2 = _split(other)
    if (head, path) != (head2, path2) or query == query2:
        return out
    a, b = _params(query), _params(query2)
    if len(a) > MAX_PARAMS or len(b) > MAX_PARAMS:
        return out
    names = {n for n, _ in a} | {n for n, _ in b}
    differ = [
        n for n in sorted(names) if [v for m, v in a if m == n] != [v for m, v in b if m == n]
    ]
    if not differ or len(differ) > 4 or any(len(n) > MAX_NAME for n in differ):
        return out
    if _without(query, differ) != _without(query2, differ):
        return out
    known = {f.key for f in out}
    base = _join(head, path, _without(query, differ))
    for name in differ:
        mine = tuple(v for m, v in a if m == name)
        theirs = tuple(v for m, v in b if m == name)
        values = mine + theirs
        if f"param:{name}" not in known:
            out.append(Feature(f"param:{name}", base, values))
        # Present on one side only, with one value: evidence for that value alone too.
        if len(values) == 1 and len(values[0]) <= MAX_VALUE:
            key = f"param:{name}={values[0]}"
            if key not in known:
                out.append(Feature(key, base, values))
    return out


# -- rules ----------------------------------------------------------------------------


def _content(name: str) -> bool:
    """A parameter name that usually chooses the page (or too short to tell)."""
    return name.lower() in CONTENT_PARAMS or len(name) <= 1


def chooses(key: str) -> bool:
    """Whether a ``param:`` rule is about a name that usually chooses the page."""
    return key.startswith("param:") and _content(key[6:].partition("=")[0])


def can_apply(key: str) -> bool:
    """Whether a rule of ``key`` may ever be applied (``param:NAME`` of a name that
    chooses pages never is, whatever its evidence)."""
    if not key.startswith("param:"):
        return True
    name, eq, _value = key[6:].partition("=")
    return bool(eq) or not _content(name)


def ready(rule: UrlRule, thresholds: Thresholds) -> bool:
    """Whether a candidate has seen enough to be applied."""
    if rule.state is not RuleState.CANDIDATE:
        return False
    pages = len(rule.pages)
    if rule.key.startswith("param:"):
        name, eq, _value = rule.key[6:].partition("=")
        content = _content(name)
        if eq:
            return pages >= thresholds.pages * (2 if content else 1)
        return not content and pages >= thresholds.pages and len(rule.values) >= thresholds.values
    return pages >= thresholds.pages


def wanted(rule: UrlRule, thresholds: Thresholds) -> int:
    """How many more pairs of spellings a candidate needs, at least, to be applied
    (each a page more, or a value more for ``param:NAME``); 0 for any other state."""
    if rule.state is not RuleState.CANDIDATE or not can_apply(rule.key):
        return 0
    pages = thresholds.pages
    name, eq, _value = rule.key[6:].partition("=") if rule.param is not None else ("", "", "")
    if eq and _content(name):
        pages *= 2
    need = max(0, pages - len(rule.pages))
    if rule.param is not None and not eq:
        need = max(need, thresholds.values - len(rule.values))
    return need


def applies(rule: UrlRule, url: str) -> str:
    """``url`` as ``rule`` alone rewrites it (itself when the rule does not touch it;
    ``slash`` rewrites toward ``rule.prefer``)."""
    head, path, query = _split(url)
    key = rule.key
    if key.startswith("param:"):
        name, eq, value = key[6:].partition("=")
        new = _without_pair(query, name, value) if eq else _without(query, [name])
        return url if new == query else _join(head, path, new)
    if key.startswith("segment:"):
        segment = key[8:]
        if f"/{segment}/" in path or path.endswith(f"/{segment}"):
            return _join(head, _drop_segment(path, segment), query)
        return url
    if query is not None:
        return url
    if key.startswith("index:"):
        if _index_file(path) == key[6:]:
            return _join(head, path[: path.rfind("/") + 1], None)
        return url
    # Not an /amp/ or /print/ view whose own rule is not applied: its pages showed the
    # slash of pages, not of their views (``/a/print/`` is no ``/a/print``).
    if (
        key == "slash"
        and _slash_toggles(path)
        and path.endswith("/") != (rule.prefer == "/")
        and _last_segment(path) not in SEGMENTS
    ):
        return _join(head, _toggle_slash(path), None)
    return url


_ORDER = ("param:", "segment:", "index:", "slash")


def rewrite(url: str, active: Mapping[str, UrlRule]) -> tuple[str, tuple[str, ...]]:
    """``url`` with every active rule applied (parameters, segments, index file, then
    the trailing slash), and the keys of the rules that changed it."""
    if not active:
        return url, ()
    keys: list[str] = []
    for kind in _ORDER:
        for key, rule in active.items():
            if key.startswith(kind):
                new = applies(rule, url)
                if new != url:
                    url = new
                    keys.append(key)
    return url, tuple(keys)
