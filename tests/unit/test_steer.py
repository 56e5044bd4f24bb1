"""Steering requests checked field by field, and the spec's revisions."""

from __future__ import annotations

import pytest

from trawl.service.spec import SpecError, check_spec
from trawl.service.steer import changes_after, check_change, check_delete, check_seeds, revise


def test_a_change_is_checked_field_by_field() -> None:
    assert check_change({"limits": {"max_pages": 10, "max_duration": None}, "delay": 0.5}) == {
        "limits": {"max_pages": 10, "max_duration": None},
        "delay": 0.5,
    }
    with pytest.raises(SpecError) as caught:
        check_change(
            {"limits": {"max_depth": None, "max_in_flight": 4, "max_pages": 0.5}, "timeout": 1}
        )
    assert caught.value.fields == {
        "limits.max_depth": "must be a number",
        "limits.max_in_flight": "unknown limit (or not changeable while the crawl runs)",
        "limits.max_pages": "must be a whole number",
        "timeout": "unknown field (or not changeable)",
    }
    empties: list[dict[str, object]] = [{}, {"limits": {}}]
    for empty in empties:
        with pytest.raises(SpecError, match="nothing to change"):
            check_change(empty)
    with pytest.raises(SpecError):
        check_change([])


def test_seeds_are_normal_urls() -> None:
    assert check_seeds({"seeds": ["HTTP://Example.ORG"]}) == ["http://example.org/"]
    with pytest.raises(SpecError) as caught:
        check_seeds({"seeds": ["http://ok.example/", "ftp://x/"], "more": 1})
    assert set(caught.value.fields) == {"seeds[1]", "more"}
    bads: list[object] = [{}, {"seeds": []}, {"seeds": "http://a/"}, None]
    for bad in bads:
        with pytest.raises(SpecError):
            check_seeds(bad)


def test_a_deletion_names_the_crawl_again() -> None:
    check_delete({"confirm": "c1"}, "c1")
    for bad in ({"confirm": "c2"}, {}, None, {"confirm": None}):
        with pytest.raises(SpecError):
            check_delete(bad, "c1")


def test_revisions_sum_up_in_the_spec_and_list_in_its_history() -> None:
    spec = check_spec({"seeds": ["http://a.example/"], "limits": {"max_pages": 5}})
    one = revise(spec, {"set": {"limits": {"max_pages": None, "max_depth": 3}}}, at=1.0)
    two = revise(one, {"seeds": ["http://a.example/", "http://b.example/"]}, at=2.0)
    three = revise(two, {"set": {"delay": 0.1}}, at=3.0)
    assert three["revision"] == 3
    assert three["limits"] == {"max_depth": 3}
    assert three["seeds"] == ["http://a.example/", "http://b.example/"]
    assert three["delay"] == 0.1
    assert [c["revision"] for c in changes_after(three, 1)] == [2, 3]
    assert changes_after(three, 3) == [] and changes_after(spec, 0) == []
    assert spec["limits"] == {"max_pages": 5} and "history" not in spec  # not changed


def test_host_overrides_are_steered_one_host_at_a_time() -> None:
    change = check_change({"hosts": {"A.example": {"delay": 5, "block": False}, "b.example": None}})
    assert change == {"hosts": {"a.example": {"delay": 5.0, "block": False}, "b.example": None}}
    with pytest.raises(SpecError) as caught:
        check_change({"hosts": {"a.example": {"delay": -1, "speed": 2}, "/": {}}})
    assert set(caught.value.fields) == {"hosts.a.example.delay", "hosts.a.example.speed", "hosts./"}
    with pytest.raises(SpecError):
        check_change({"hosts": ["a.example"]})
    spec = check_spec(
        {"seeds": ["http://a.example/"], "hosts": {"b.example": {"block": True}, "c.example": {}}}
    )
    one = revise(spec, {"set": change}, at=1.0)
    assert one["hosts"] == {"a.example": {"delay": 5.0, "block": False}, "c.example": {}}
    # A host's settings replace its override whole.
    two = revise(one, {"set": {"hosts": {"a.example": {"budget": 3}}}}, at=2.0)
    assert two["hosts"]["a.example"] == {"budget": 3}


def test_seeds_added_with_priorities_are_kept_once() -> None:
    added = check_seeds({"seeds": [{"url": "http://B.example", "priority": 5}, "http://a.example"]})
    assert added == [{"url": "http://b.example/", "priority": 5.0}, "http://a.example/"]
    spec = check_spec({"seeds": ["http://a.example/"]})
    one = revise(spec, {"seeds": added}, at=1.0)
    assert one["seeds"] == ["http://a.example/", {"url": "http://b.example/", "priority": 5.0}]
    with pytest.raises(SpecError) as caught:
        check_seeds({"seeds": [{"url": "http://a.example/", "priority": 0}]})
    assert set(caught.value.fields) == {"seeds[0].priority"}
