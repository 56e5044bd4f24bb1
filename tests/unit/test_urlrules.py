"""The rules of learned URL equivalences, pure: spellings, pairs, rewriting, thresholds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from trawl.dedup.urlrules import (
    RuleState,
    Thresholds,
    UrlRule,
    applies,
    features,
    pair_features,
    ready,
    rewrite,
)

H = "http://h.example"


def active(key: str, **changes: object) -> UrlRule:
    return replace(UrlRule("h.example", key, RuleState.ACTIVE), **changes)  # type: ignore[arg-type]


def test_features_name_every_spelling_and_its_base() -> None:
    found = {f.key: f.base for f in features(f"{H}/amp/a/b/index.html?ref=x&sid=1")}
    assert found == {
        "param:ref": f"{H}/amp/a/b/index.html?sid=1",
        "param:ref=x": f"{H}/amp/a/b/index.html?sid=1",
        "param:sid": f"{H}/amp/a/b/index.html?ref=x",
        "param:sid=1": f"{H}/amp/a/b/index.html?ref=x",
        "segment:amp": f"{H}/a/b/index.html?ref=x&sid=1",
    }
    # An index file and a trailing slash are spellings of URLs without a query only.
    assert {f.key: f.base for f in features(f"{H}/a/b/index.html")} == {
        "index:index.html": f"{H}/a/b/",
    }
    assert {f.key: f.base for f in features(f"{H}/a/b/print/")} == {
        "segment:print": f"{H}/a/b/",
        "slash": f"{H}/a/b/print",
    }
    assert {f.key: f.base for f in features(f"{H}/a")} == {"slash": f"{H}/a/"}


@pytest.mark.parametrize("url", [f"{H}/", f"{H}/file.pdf", f"{H}/a//"])
def test_no_slash_spelling_for_the_root_files_or_empty_segments(url: str) -> None:
    assert [f for f in features(url) if f.key == "slash"] == []


def test_a_long_value_gets_no_rule_of_its_own_and_a_long_name_none() -> None:
    keys = {f.key for f in features(f"{H}/a?sid={'f' * 40}")}
    assert keys == {"param:sid"}
    assert features(f"{H}/a?{'n' * 65}=1") == []
    assert pair_features(f"{H}/a?{'n' * 65}=1", f"{H}/a") == []


def test_pairs_are_evidence_for_what_separates_them() -> None:
    assert {f.key for f in pair_features(f"{H}/a/?ref=x&sid=1", f"{H}/a/")} == {
        "param:ref",
        "param:ref=x",
        "param:sid",
        "param:sid=1",
    }
    [value_diff] = pair_features(f"{H}/a?sid=1", f"{H}/a?sid=2")
    assert (value_diff.key, value_diff.values) == ("param:sid", ("1", "2"))
    [slash] = pair_features(f"{H}/a", f"{H}/a/")
    assert (slash.key, slash.vote) == ("slash", "/")  # the kept copy has the slash
    assert [f.key for f in pair_features(f"{H}/amp/a/", f"{H}/a/")] == ["segment:amp"]
    # Two spellings at once, or another page altogether: evidence for nothing.
    assert pair_features(f"{H}/amp/a?x=1", f"{H}/a/") == []
    assert pair_features(f"{H}/a?x=1", f"{H}/b?x=1") == []
    assert pair_features(f"{H}/a", f"{H}/a") == []


def test_rewrite_applies_active_rules_in_order_and_is_idempotent() -> None:
    rules = {
        k: active(k)
        for k in ("param:ref", "param:amp=1", "segment:amp", "index:index.html", "slash")
    }
    rules["slash"] = active("slash", prefer="")
    url = f"{H}/amp/a/b/index.html?ref=x&amp=1"
    new, keys = rewrite(url, rules)
    assert new == f"{H}/a/b"
    assert keys == ("param:ref", "param:amp=1", "segment:amp", "index:index.html", "slash")
    assert rewrite(new, rules) == (new, ())
    # A query left: the path stays as the script that answers it is named.
    kept, keys = rewrite(f"{H}/amp/a/b/index.html?ref=x&amp=2&k=v", rules)
    assert (kept, keys) == (f"{H}/a/b/index.html?amp=2&k=v", ("param:ref", "segment:amp"))
    assert rewrite(url, {}) == (url, ())


@pytest.mark.parametrize(
    ("key", "url", "expected"),
    [
        ("param:sid", f"{H}/a?sid=1&k=2", f"{H}/a?k=2"),
        ("param:sid", f"{H}/a?sid=1", f"{H}/a"),
        ("param:lang=en", f"{H}/a?lang=fr", f"{H}/a?lang=fr"),
        ("param:lang=en", f"{H}/a?lang=en", f"{H}/a"),
        ("segment:amp", f"{H}/amp/", f"{H}/"),
        ("segment:amp", f"{H}/a/amp", f"{H}/a"),
        ("segment:amp", f"{H}/ampx/a", f"{H}/ampx/a"),
        ("index:index.php", f"{H}/d/index.php", f"{H}/d/"),
        ("index:index.php", f"{H}/d/index.php?x=1", f"{H}/d/index.php?x=1"),
        ("index:index.php", f"{H}/d/index.php/x", f"{H}/d/index.php/x"),
    ],
)
def test_applies(key: str, url: str, expected: str) -> None:
    assert applies(active(key), url) == expected


def test_slash_goes_toward_the_preferred_form() -> None:
    assert applies(active("slash", prefer="/"), f"{H}/a") == f"{H}/a/"
    assert applies(active("slash", prefer="/"), f"{H}/item?id=7") == f"{H}/item?id=7"
    assert applies(active("slash", prefer=""), f"{H}/a/") == f"{H}/a"
    assert applies(active("slash", prefer=""), f"{H}/") == f"{H}/"
    # A print view keeps its slash unless its own rule takes the segment away first.
    assert applies(active("slash", prefer=""), f"{H}/a/print/") == f"{H}/a/print/"
    rules = {k: active(k, prefer="") for k in ("segment:print", "slash")}
    assert rewrite(f"{H}/a/print/", rules) == (f"{H}/a", ("segment:print", "slash"))
    assert rewrite(f"{H}/a/print/", {"slash": rules["slash"]}) == (f"{H}/a/print/", ())


def test_ready_needs_pages_and_values() -> None:
    t = Thresholds(pages=4, values=3)
    sid = UrlRule("h", "param:sid", pages=("1", "2", "3", "4"), values=("a", "b"))
    assert not ready(sid, t)  # two values only
    assert ready(replace(sid, values=("a", "b", "c")), t)
    assert not ready(replace(sid, pages=("1", "2", "3"), values=("a", "b", "c")), t)
    assert not ready(replace(sid, state=RuleState.REFUTED, values=("a", "b", "c")), t)
    assert ready(UrlRule("h", "param:amp=1", pages=("1", "2", "3", "4")), t)
    assert ready(UrlRule("h", "slash", pages=("1", "2", "3", "4")), t)


@pytest.mark.parametrize("name", ["page", "id", "q", "p", "lang", "sort", "PAGE", "x"])
def test_a_content_parameter_is_never_dropped_whatever_its_value(name: str) -> None:
    t = Thresholds(pages=4, values=3)
    many = tuple(str(i) for i in range(16))
    assert not ready(UrlRule("h", f"param:{name}", pages=many, values=many), t)
    # One value of it (page=1 is the listing itself) needs twice the pages.
    one = UrlRule("h", f"param:{name}=1", pages=many[:7])
    assert not ready(one, t)
    assert ready(replace(one, pages=many[:8]), t)


def test_rule_round_trip_and_merge() -> None:
    rule = UrlRule("h", "slash", RuleState.ACTIVE, ("p",), (), (2, 1), "/", "3 pages", 5.5, 9)
    assert UrlRule.load("h", "slash", 1, rule.body(), 9) == rule
    older = replace(rule, state=RuleState.CANDIDATE, pages=())
    assert rule.merged(older) == rule
    refuted = replace(rule, state=RuleState.REFUTED, rewrites=0)
    assert rule.merged(refuted) == replace(refuted, rewrites=9)
