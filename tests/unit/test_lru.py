"""The bounded map the per-host holders share."""

from __future__ import annotations

from collections import OrderedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trawl.lru import Lru


def test_holds_at_most_its_capacity_forgetting_the_least_recently_used() -> None:
    lru: Lru[str, int] = Lru(3)
    for i, key in enumerate("abc"):
        lru.put(key, i)
    assert lru.get("a") == 0  # used: now the newest
    lru.put("d", 3)
    assert list(lru) == ["c", "a", "d"]
    assert "b" not in lru and lru.get("b") is None
    assert len(lru) == 3


def test_peek_reads_without_making_the_entry_newest() -> None:
    lru: Lru[str, int] = Lru(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.peek("a") == 1
    lru.put("c", 3)
    assert "a" not in lru and list(lru) == ["b", "c"]
    assert lru.peek("zz", -1) == -1 and lru.get("zz", -1) == -1


def test_putting_a_held_key_again_replaces_it_and_forgets_nothing() -> None:
    lru: Lru[str, int] = Lru(2)
    lru.put("a", 1)
    lru.put("b", 2)
    lru.put("a", 10)
    assert list(lru.__iter__()) == ["b", "a"] and lru.peek("a") == 10


def test_when_full_the_oldest_tenth_goes_at_once() -> None:
    lru: Lru[int, int] = Lru(100)
    for i in range(100):
        lru.put(i, i)
    lru.put(100, 100)
    assert len(lru) == 91 and list(lru)[:2] == [10, 11]
    assert lru.pop(50) == 50 and lru.pop(50) is None and len(lru) == 90


def test_a_capacity_under_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Lru(0)


@settings(max_examples=300, deadline=None)
@given(
    capacity=st.integers(1, 25),
    steps=st.lists(
        st.tuples(st.sampled_from(["get", "peek", "put", "pop"]), st.integers(0, 40)),
        max_size=300,
    ),
)
def test_it_behaves_as_an_ordered_map_forgetting_its_oldest_tenth(
    capacity: int, steps: list[tuple[str, int]]
) -> None:
    lru: Lru[int, int] = Lru(capacity)
    model: OrderedDict[int, int] = OrderedDict()
    batch = max(1, capacity // 10)
    for n, (op, key) in enumerate(steps):
        if op == "get":
            assert lru.get(key) == model.get(key)
            if key in model:
                model.move_to_end(key)
        elif op == "peek":
            assert lru.peek(key) == model.get(key)
        elif op == "pop":
            assert lru.pop(key) == model.pop(key, None)
        else:
            lru.put(key, n)
            if key in model:
                model.move_to_end(key)
            elif len(model) >= capacity:
                for _ in range(batch):
                    model.popitem(last=False)
            model[key] = n
        assert list(lru) == list(model) and len(lru) <= capacity


def test_get_or_add_makes_a_value_only_when_absent_and_makes_it_newest() -> None:
    lru: Lru[str, list[int]] = Lru(2)
    made: list[str] = []

    def make() -> list[int]:
        made.append("x")
        return []

    first = lru.get_or_add("a", make)
    lru.put("b", [1])
    assert lru.get_or_add("a", make) is first and made == ["x"]
    lru.put("c", [2])  # "b" is now the least recently used
    assert list(lru) == ["a", "c"]
