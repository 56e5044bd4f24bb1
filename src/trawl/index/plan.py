"""A parsed query becomes a tantivy query over the fields of the index's languages.

A word is analysed once per language the index holds (each language stems its own
way) and asks ``title_<code>`` (boosted) and ``body_<code>`` of each; scores are
BM25, summed over title and body, so a page matching in both ranks above one
matching in the body only. A word the analyzer splits (``e-mail``) is a phrase of its
parts. Words that analyse to nothing (``!!!``) drop out of the query; a query left
with nothing to match is an error, and so is one that only excludes (``-spam``: it
would rank the whole index by nothing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import tantivy

from trawl.index.query import And, Node, Not, Or, Phrase, QueryError, Site, Word
from trawl.index.schema import body_field, title_field

TITLE_BOOST = 2.5
_NOTHING = "nothing to search for: the query has no words the index can match"
_ONLY_NOT = "nothing to search for: a query cannot only exclude; add a word or a phrase"


@dataclass(frozen=True, slots=True)
class Plan:
    query: tantivy.Query
    # The positive terms on the body fields, for the snippet generator (None: none).
    highlight: tantivy.Query | None


class Compiler:
    """Builds queries for one searcher (its schema, languages and analyzers)."""

    def __init__(
        self,
        schema: tantivy.Schema,
        languages: tuple[str, ...],
        analyzers: Mapping[str, tantivy.TextAnalyzer],
        *,
        title_boost: float = TITLE_BOOST,
    ) -> None:
        self._schema = schema
        self._languages = languages
        self._analyzers = analyzers
        self._boost = title_boost

    def compile(self, root: Node, replace: Mapping[int, str] | None = None) -> Plan:
        """``replace``: id(word) -> its corrected text."""
        self._replace = replace or {}
        self._highlight: list[tantivy.Query] = []
        if isinstance(root, Not) or (
            isinstance(root, And) and all(isinstance(c, Not) for c in root.children)
        ):
            raise QueryError(_ONLY_NOT)
        query = self._node(root, positive=True)
        if query is None:
            raise QueryError(_NOTHING)
        highlight = None
        if self._highlight:
            highlight = tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, q) for q in self._highlight]
            )
        return Plan(query=query, highlight=highlight)

    # -- nodes -------------------------------------------------------------------------

    def _node(self, node: Node, *, positive: bool) -> tantivy.Query | None:
        if isinstance(node, Word):
            return self._text(self._replace.get(id(node), node.text), positive=positive)
        if isinstance(node, Phrase):
            return self._text(node.text, positive=positive)
        if isinstance(node, Site):
            return tantivy.Query.term_query(self._schema, "site", node.host)
        if isinstance(node, Not):
            inner = self._node(node.child, positive=not positive)
            if inner is None:
                return None
            return tantivy.Query.boolean_query(
                [(tantivy.Occur.Must, tantivy.Query.all_query()), (tantivy.Occur.MustNot, inner)]
            )
        if isinstance(node, And):
            return self._and(node, positive=positive)
        return self._or(node, positive=positive)

    def _and(self, node: And, *, positive: bool) -> tantivy.Query | None:
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        excluded: list[tuple[tantivy.Occur, tantivy.Query]] = []
        for child in node.children:
            if isinstance(child, Not):
                q = self._node(child.child, positive=not positive)
                if q is not None:
                    excluded.append((tantivy.Occur.MustNot, q))
                continue
            q = self._node(child, positive=positive)
            if q is not None:
                clauses.append((tantivy.Occur.Must, q))
        if not clauses:
            if not excluded:
                return None
            clauses.append((tantivy.Occur.Must, tantivy.Query.all_query()))
        if len(clauses) == 1 and not excluded:
            return clauses[0][1]
        return tantivy.Query.boolean_query(clauses + excluded)

    def _or(self, node: Or, *, positive: bool) -> tantivy.Query | None:
        subs = [q for c in node.children if (q := self._node(c, positive=positive)) is not None]
        if not subs:
            return None
        if len(subs) == 1:
            return subs[0]
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in subs])

    # -- text --------------------------------------------------------------------------

    def _text(self, text: str, *, positive: bool) -> tantivy.Query | None:
        """A word or phrase: for each language, its tokens in title (boosted) or body."""
        per_field: list[tantivy.Query] = []
        for code in self._languages:
            tokens = self._analyzers[code].analyze(text)
            if not tokens:
                continue
            body = self._tokens(body_field(code), tokens)
            title = self._tokens(title_field(code), tokens)
            per_field.append(tantivy.Query.boost_query(title, self._boost))
            per_field.append(body)
            if positive:
                self._highlight.append(body)
        if not per_field:
            return None
        if len(per_field) == 1:
            return per_field[0]
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in per_field])

    def _tokens(self, field: str, tokens: list[str]) -> tantivy.Query:
        if len(tokens) == 1:
            return tantivy.Query.term_query(self._schema, field, tokens[0])
        return tantivy.Query.phrase_query(self._schema, field, list(tokens))
