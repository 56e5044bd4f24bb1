"""The query language, parsed here (user text never reaches tantivy's own parser).

    words           all must match (AND is the default)
    "a phrase"      the words in this order
    a OR b          either (OR binds looser than AND: ``a b OR c`` is ``(a b) OR c``)
    a AND b         both (the same as ``a b``)
    NOT a, -a       must not match;  +a  must match (the default, accepted)
    ( ... )         grouping
    site:host       pages of ``host`` and its subdomains

Operators are upper case; ``and``, ``or`` and ``not`` in lower case are words. Control
characters and markup are removed and the text put in NFKC form first. A query over
``MAX_QUERY_CHARS`` characters is refused rather than cut (a cut can split a phrase
and silently change the meaning), and so is one of more than ``MAX_CLAUSES`` words,
phrases and sites, which bounds the work one query can ask for. Whatever the text,
parsing returns a tree or raises ``QueryError`` with a message fit to show the user.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from trawl.errors import TrawlError
from trawl.index.schema import normalise

MAX_QUERY_CHARS = 1000
MAX_CLAUSES = 32
MAX_DEPTH = 16


class QueryError(TrawlError, ValueError):
    """A query that cannot be run; ``message`` says why, in words for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class Word:
    text: str
    # Where the word is in the cleaned query, to rewrite it when it is corrected.
    start: int = field(default=0, compare=False)
    end: int = field(default=0, compare=False)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Phrase:
    text: str

    def __str__(self) -> str:
        return f'"{self.text}"'


@dataclass(frozen=True, slots=True)
class Site:
    host: str

    def __str__(self) -> str:
        return f"site:{self.host}"


@dataclass(frozen=True, slots=True)
class Not:
    child: Node

    def __str__(self) -> str:
        return f"-{_group(self.child)}"


@dataclass(frozen=True, slots=True)
class And:
    children: tuple[Node, ...]

    def __str__(self) -> str:
        return " ".join(_group(c) for c in self.children)


@dataclass(frozen=True, slots=True)
class Or:
    children: tuple[Node, ...]

    def __str__(self) -> str:
        return " OR ".join(_group(c) for c in self.children)


Node = Word | Phrase | Site | Not | And | Or


def _group(node: Node) -> str:
    return f"({node})" if isinstance(node, And | Or) else str(node)


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    text: str  # the cleaned query the user's words are positions in
    root: Node

    @property
    def canonical(self) -> str:
        """One spelling per meaning (the cache key): ``a  AND b`` and ``a b`` agree."""
        return str(self.root)

    def words(self) -> list[Word]:
        """The words that count towards a match (not those under NOT)."""
        out: list[Word] = []

        def walk(node: Node) -> None:
            if isinstance(node, Word):
                out.append(node)
            elif isinstance(node, And | Or):
                for c in node.children:
                    walk(c)

        walk(self.root)
        return out


# -- lexing ------------------------------------------------------------------------

_TOKEN = re.compile(r'\s*(?:(")|(\()|(\))|([^\s"()]+))')
_HOST = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$")


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str  # WORD PHRASE SITE ( ) AND OR NOT - +
    text: str
    start: int
    end: int


def _site(value: str) -> str:
    raw = value.strip().lower()
    if "//" in raw:
        raw = urlsplit(raw).hostname or ""
    host = raw.split("/", 1)[0].split(":", 1)[0].rstrip(".")
    # site:www.example.org means the site, not one of its hosts.
    if host.startswith("www."):
        host = host[4:]
    if not host:
        raise QueryError("site: needs a host name, as in site:example.org")
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise QueryError(f"site:{value} is not a valid host name") from None
    if not _HOST.match(host) or len(host) > 253:
        raise QueryError(f"site:{value} is not a valid host name")
    return host


def _lex(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # only trailing whitespace is left
            break
        pos = m.end()
        if m.group(1):
            close = text.find('"', pos)
            if close < 0:
                raise QueryError('unbalanced quotes: a phrase opened with " is never closed')
            toks.append(_Tok("PHRASE", text[pos:close], m.start(1), close + 1))
            pos = close + 1
        elif m.group(2) or m.group(3):
            toks.append(_Tok(m.group(0).strip(), m.group(0).strip(), m.start(), m.end()))
        else:
            word, start = m.group(4), m.start(4)
            # A leading - or + is an operator when something follows it at once.
            while len(word) > 1 and word[0] in "-+":
                toks.append(_Tok(word[0], word[0], start, start + 1))
                word, start = word[1:], start + 1
            if word in ("-", "+") and text[start + 1 : start + 2] in ("(", '"'):
                toks.append(_Tok(word, word, start, start + 1))
            elif word in ("AND", "OR", "NOT"):
                toks.append(_Tok(word, word, start, start + len(word)))
            elif word[:5].lower() == "site:":
                toks.append(_Tok("SITE", _site(word[5:]), start, start + len(word)))
            else:
                toks.append(_Tok("WORD", word, start, start + len(word)))
    return toks


# -- parsing -----------------------------------------------------------------------


class _Parser:
    def __init__(self, toks: list[_Tok]) -> None:
        self.toks = toks
        self.i = 0
        self.clauses = 0

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> _Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def parse(self) -> Node:
        node = self.expr(0)
        tok = self.peek()
        if tok is not None:
            # Only a ")" with no "(" stops an expression early.
            raise QueryError("unbalanced parentheses: a ) has no ( before it")
        return node

    def expr(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise QueryError(f"parentheses nested too deep (at most {MAX_DEPTH})")
        parts = [self.conjunction(depth, after=None)]
        while (tok := self.peek()) is not None and tok.kind == "OR":
            self.take()
            parts.append(self.conjunction(depth, after="OR"))
        return parts[0] if len(parts) == 1 else Or(tuple(parts))

    def conjunction(self, depth: int, *, after: str | None) -> Node:
        parts: list[Node] = []
        while (tok := self.peek()) is not None and tok.kind not in ("OR", ")"):
            if tok.kind == "AND":
                self.take()
                if not parts:
                    raise QueryError("AND needs a search term on each side")
                nxt = self.peek()
                if nxt is None or nxt.kind in ("OR", ")", "AND"):
                    raise QueryError("AND needs a search term on each side")
                continue
            parts.append(self.unary(depth))
        if not parts:
            if after is not None:
                raise QueryError(f"{after} needs a search term on each side")
            tok = self.peek()
            if tok is not None and tok.kind == "OR":
                raise QueryError("OR needs a search term on each side")
            if tok is not None and tok.kind == ")":
                raise QueryError("unbalanced parentheses: a ) has no ( before it")
            raise QueryError("the query is empty: type a word or a phrase to search for")
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def unary(self, depth: int) -> Node:
        tok = self.take()
        if tok.kind in ("NOT", "-"):
            nxt = self.peek()
            if nxt is None or nxt.kind in ("OR", "AND", ")"):
                name = "NOT" if tok.kind == "NOT" else "-"
                raise QueryError(f"{name} needs a search term after it")
            return Not(self.unary(depth))
        if tok.kind == "+":
            nxt = self.peek()
            if nxt is None or nxt.kind in ("OR", "AND", ")"):
                raise QueryError("+ needs a search term after it")
            return self.unary(depth)
        if tok.kind == "(":
            if (nxt := self.peek()) is not None and nxt.kind == ")":
                raise QueryError("empty parentheses: put search terms between ( and )")
            node = self.expr(depth + 1)
            close = self.peek()
            if close is None or close.kind != ")":
                raise QueryError("unbalanced parentheses: a ( is never closed")
            self.take()
            return node
        self.clauses += 1
        if self.clauses > MAX_CLAUSES:
            raise QueryError(f"too many search terms: at most {MAX_CLAUSES}")
        if tok.kind == "PHRASE":
            return Phrase(" ".join(tok.text.split()))
        if tok.kind == "SITE":
            return Site(tok.text)
        return Word(tok.text, tok.start, tok.end)


def clean(query: str) -> str:
    """The query as it is parsed: length checked, control characters and markup out."""
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(
            f"the query is too long: {len(query):,} characters, at most {MAX_QUERY_CHARS:,}"
        )
    # Lone surrogates cannot be encoded for the index or the answer.
    query = query.encode("utf-8", "replace").decode("utf-8")
    # Until nothing changes: taking markup out can make markup ("< < > >" -> "< >"),
    # and the canonical form must parse to itself. Each change shortens the text
    # (NFKC, which may lengthen it, changes nothing the second time).
    for _ in range(8):
        cleaned = normalise(query)
        if cleaned == query:
            break
        query = cleaned
    return query.strip()


def parse(query: str) -> ParsedQuery:
    """Parse ``query``; raises QueryError with a message for the user."""
    text = clean(query)
    if not text:
        raise QueryError("the query is empty: type a word or a phrase to search for")
    return ParsedQuery(text=text, root=_Parser(_lex(text)).parse())


def rewrite(parsed: ParsedQuery, corrections: list[tuple[Word, str]]) -> str:
    """The cleaned query with corrected words put in place (what 'showing results for'
    shows)."""
    text = parsed.text
    for word, fixed in sorted(corrections, key=lambda c: c[0].start, reverse=True):
        text = text[: word.start] + fixed + text[word.end :]
    return text
