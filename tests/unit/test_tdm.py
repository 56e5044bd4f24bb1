from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trawl.parse.tdm import TdmDecision, decide, from_headers, from_meta, parse_tdmrep_json

# The report's second example.
_EXAMPLE = b"""[
  {"location": "/directory-a/", "tdm-reservation": 1},
  {"location": "/directory-b/html/", "tdm-reservation": 1,
   "tdm-policy": "https://provider.com/policies/policy.json"},
  {"location": "/directory-b/images/*.jpg", "tdm-reservation": 0}
]"""


def test_report_example() -> None:
    rules = parse_tdmrep_json(_EXAMPLE)
    assert rules.for_path("/directory-a/x.pdf") == TdmDecision(True, None, "tdmrep.json")
    assert rules.for_path("https://provider.com/directory-b/html/p.html") == TdmDecision(
        True, "https://provider.com/policies/policy.json", "tdmrep.json"
    )
    assert rules.for_path("/directory-b/images/a/b.jpg") == TdmDecision(False, None, "tdmrep.json")
    assert rules.for_path("/directory-b/images/a.png") is None
    assert rules.for_path("/") is None


def test_first_rule_in_file_order_wins() -> None:
    rules = parse_tdmrep_json(
        b'[{"location": "/", "tdm-reservation": 0}, {"location": "/a/", "tdm-reservation": 1}]'
    )
    assert rules.for_path("/a/b") == TdmDecision(False, None, "tdmrep.json")


def test_matching_rules() -> None:
    rules = parse_tdmrep_json(
        b'[{"location": "/exact$", "tdm-reservation": 1},'
        b' {"location": "/Case", "tdm-reservation": 1},'
        b' {"location": "/%7Etilde", "tdm-reservation": 1},'
        b' {"location": "/foo-%24", "tdm-reservation": 1}]'
    )
    assert rules.for_path("/exact") is not None
    assert rules.for_path("/exact/more") is None
    assert rules.for_path("/case") is None  # case sensitive
    assert rules.for_path("/~tilde/x") is not None  # unreserved escapes decoded
    assert rules.for_path("/foo-$") is not None  # %24 matches a literal $


def test_invalid_values_are_unset() -> None:
    rules = parse_tdmrep_json(
        b'[{"location": "/a", "tdm-reservation": 2}, {"tdm-reservation": 1},'
        b' {"location": "/b", "tdm-reservation": true}, {"location": "/", "tdm-reservation": "1"}]'
    )
    assert rules.for_path("/a") is None  # first match has no valid value: unset
    assert rules.for_path("/b") is None
    assert rules.for_path("/c") == TdmDecision(True, None, "tdmrep.json")


def test_policy_only_with_a_reservation() -> None:
    rules = parse_tdmrep_json(
        b'[{"location": "/", "tdm-reservation": 0, "tdm-policy": "https://p"}]'
    )
    assert rules.for_path("/x") == TdmDecision(False, None, "tdmrep.json")


def test_garbage_is_no_rules() -> None:
    for body in (b"", b"{}", b"null", b"[1, 2]", b"\xff\xfe", b"[" * 100_000, b"x" * 600_000):
        assert parse_tdmrep_json(body).rules == ()


def test_headers_and_meta() -> None:
    assert from_headers([("TDM-Reservation", " 1"), ("tdm-policy", "https://p")]) == TdmDecision(
        True, "https://p", "header"
    )
    assert from_headers([("tdm-reservation", "1, 1")]) == TdmDecision(True, None, "header")
    assert from_headers([("tdm-reservation", "yes")]) is None
    assert from_headers([]) is None
    assert from_meta([("tdm-reservation", "0")]) == TdmDecision(False, None, "meta")
    assert from_meta([("robots", "noai")]) is None


def test_precedence_meta_over_header_over_file() -> None:
    file = TdmDecision(True, None, "tdmrep.json")
    header = TdmDecision(False, None, "header")
    meta = TdmDecision(True, "https://p", "meta")
    assert decide(header, meta, file) == meta
    assert decide(header, None, file) == header
    assert decide(None, None, file) == file
    assert decide(None, None, None) == TdmDecision(False, None, "unset")


@given(st.binary(max_size=3000))
def test_parser_never_raises(body: bytes) -> None:
    parse_tdmrep_json(body).for_path("/any/path")


@given(st.lists(st.fixed_dictionaries({"location": st.text(max_size=30)}), max_size=5), st.text())
def test_any_location_and_path(rules: list[dict[str, str]], path: str) -> None:
    body = str([{**r, "tdm-reservation": 1} for r in rules]).replace("'", '"').encode()
    parse_tdmrep_json(body).for_path(path)
