"""A parsed query becomes a tree of scored clauses, rendered as a tantivy query.

A word is analysed once per language the index holds (each language stems its own
way) and asks ``title_<code>`` (boosted) and ``body_<code>`` of each; scores are
BM25, summed over title and body, so a page matching in both ranks above one
matching in the body only. A word the analyzer splits (``e-mail``) is a phrase of its
parts. Words that analyse to nothing (``!!!``) drop out of the query; a query left
with nothing to match is an error, and so is one that only excludes (``-spam``: it
would rank the whole index by nothing).

The compiler builds a tree (``Leaf``: one term or phrase in one field; ``Boosted``;
``Clauses``: a boolean query; ``AllDocs``) that mirrors the tantivy query clause for
clause. ``render`` makes the tantivy query of it, optionally with a weight on each
leaf: a search over several indexes weights each leaf by the ratio of the global to
the index's own inverse document frequency (``index/stats.py``), and the tree is what
a page's exact score over all of them is computed from (``exact_score``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import tantivy

from trawl.index.query import And, Node, Not, Or, Phrase, QueryError, Site, Word
from trawl.index.schema import body_field, title_field

TITLE_BOOST = 2.5
_NOTHING = "nothing to search for: the query has no words the index can match"
_ONLY_NOT = "nothing to search for: a query cannot only exclude; add a word or a phrase"


@dataclass(frozen=True, eq=False, slots=True)
class Leaf:
    """A term (one token) or a phrase (several) in one field, scored by BM25."""

    field: str
    tokens: tuple[str, ...]
    query: tantivy.Query  # unweighted


@dataclass(frozen=True, eq=False, slots=True)
class Boosted:
    factor: float
    child: Tree


@dataclass(frozen=True, eq=False, slots=True)
class Clauses:
    """A boolean query: Must clauses all match, MustNot none; with no Must, at least one
    Should; the score is the sum of the matching positive clauses'."""

    clauses: tuple[tuple[tantivy.Occur, Tree], ...]


@dataclass(frozen=True, eq=False, slots=True)
class AllDocs:
    """Every document, each scoring 1."""


Tree = Leaf | Boosted | Clauses | AllDocs
Weight = Callable[[Leaf], float]


def render(tree: Tree, weight: Weight | None = None) -> tantivy.Query:
    """The tantivy query of ``tree``; ``weight`` multiplies each leaf's score."""
    if isinstance(tree, Leaf):
        w = 1.0 if weight is None else weight(tree)
        return tree.query if w == 1.0 else tantivy.Query.boost_query(tree.query, w)
    if isinstance(tree, Boosted):
        return tantivy.Query.boost_query(render(tree.child, weight), tree.factor)
    if isinstance(tree, Clauses):
        return tantivy.Query.boolean_query([(o, render(c, weight)) for o, c in tree.clauses])
    return tantivy.Query.all_query()


def leaves(tree: Tree) -> list[Leaf]:
    if isinstance(tree, Leaf):
        return [tree]
    if isinstance(tree, Boosted):
        return leaves(tree.child)
    if isinstance(tree, Clauses):
        return [leaf for _o, c in tree.clauses for leaf in leaves(c)]
    return []


LeafScore = Callable[[Leaf], float | None]  # None: the leaf does not match the page


def exact_score(tree: Tree, leaf_score: LeafScore) -> float | None:
    """The score of a page under ``tree`` given each leaf's (None: no match), summed as
    tantivy sums it."""
    if isinstance(tree, Leaf):
        return leaf_score(tree)
    if isinstance(tree, Boosted):
        inner = exact_score(tree.child, leaf_score)
        return None if inner is None else inner * tree.factor
    if isinstance(tree, AllDocs):
        return 1.0
    total = 0.0
    musts = shoulds = matched_shoulds = 0
    for occur, child in tree.clauses:
        if occur == tantivy.Occur.MustNot:
            continue
        score = exact_score(child, leaf_score)
        if occur == tantivy.Occur.Must:
            musts += 1
            if score is None:
                return None
        else:
            shoulds += 1
            if score is None:
                continue
            matched_shoulds += 1
        total += score
    if musts == 0 and matched_shoulds == 0:
        return None
    for occur, child in tree.clauses:
        if occur == tantivy.Occur.MustNot and exact_score(child, leaf_score) is not None:
            return None
    return total


@dataclass(frozen=True, slots=True)
class Plan:
    tree: Tree
    query: tantivy.Query  # the tree rendered without weights
    # The positive terms on the body fields, for the snippet generator (None: none).
    highlight: tantivy.Query | None
    fields: frozenset[str] = field(default_factory=frozenset)  # every leaf's field


class Compiler:
    """Builds queries for searchers of one schema over ``languages``."""

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
        tree = self._node(root, positive=True)
        if tree is None:
            raise QueryError(_NOTHING)
        highlight = None
        if self._highlight:
            highlight = tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, q) for q in self._highlight]
            )
        fields = frozenset(leaf.field for leaf in leaves(tree))
        return Plan(tree=tree, query=render(tree), highlight=highlight, fields=fields)

    # -- nodes -------------------------------------------------------------------------

    def _node(self, node: Node, *, positive: bool) -> Tree | None:
        if isinstance(node, Word):
            return self._text(self._replace.get(id(node), node.text), positive=positive)
        if isinstance(node, Phrase):
            return self._text(node.text, positive=positive)
        if isinstance(node, Site):
            return self._leaf("site", [node.host])
        if isinstance(node, Not):
            inner = self._node(node.child, positive=not positive)
            if inner is None:
                return None
            return Clauses(((tantivy.Occur.Must, AllDocs()), (tantivy.Occur.MustNot, inner)))
        if isinstance(node, And):
            return self._and(node, positive=positive)
        return self._or(node, positive=positive)

    def _and(self, node: And, *, positive: bool) -> Tree | None:
        clauses: list[tuple[tantivy.Occur, Tree]] = []
        excluded: list[tuple[tantivy.Occur, Tree]] = []
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
            clauses.append((tantivy.Occur.Must, AllDocs()))
        if len(clauses) == 1 and not excluded:
            return clauses[0][1]
        return Clauses(tuple(clauses + excluded))

    def _or(self, node: Or, *, positive: bool) -> Tree | None:
        subs = [q for c in node.children if (q := self._node(c, positive=positive)) is not None]
        if not subs:
            return None
        if len(subs) == 1:
            return subs[0]
        return Clauses(tuple((tantivy.Occur.Should, q) for q in subs))

    # -- text --------------------------------------------------------------------------

    def _text(self, text: str, *, positive: bool) -> Tree | None:
        """A word or phrase: for each language, its tokens in title (boosted) or body."""
        per_field: list[Tree] = []
        for code in self._languages:
            tokens = self._analyzers[code].analyze(text)
            if not tokens:
                continue
            body = self._leaf(body_field(code), tokens)
            title = self._leaf(title_field(code), tokens)
            per_field.append(Boosted(self._boost, title))
            per_field.append(body)
            if positive:
                self._highlight.append(body.query)
        if not per_field:
            return None
        if len(per_field) == 1:
            return per_field[0]
        return Clauses(tuple((tantivy.Occur.Should, q) for q in per_field))

    def _leaf(self, field: str, tokens: list[str]) -> Leaf:
        if len(tokens) == 1:
            query = tantivy.Query.term_query(self._schema, field, tokens[0])
        else:
            query = tantivy.Query.phrase_query(self._schema, field, list(tokens))
        return Leaf(field, tuple(tokens), query)
