"""The extractor's DOM walk in C (trawl._native.DomWalker) against the Python walk it
stands for (_extract_dom.walk_python): equal Dom, every field, on the shipped sample
web, on seeded hostile HTML and on the extraction benchmark's pages; and proof that
the C walk is the one in use."""

from __future__ import annotations

import gzip
import itertools
import random
from pathlib import Path

import pytest
import selectolax
from selectolax.lexbor import LexborDocumentOptions, LexborHTMLParser, LexborNode

from trawl.parse import _extract_walk
from trawl.parse._extract_dom import Dom, walk_python
from trawl.parse._extract_signals import (
    BLOCK_TAGS,
    BOILERPLATE_ROLES,
    BOILERPLATE_TAGS,
    HIDDEN_TOKENS,
    NO_ATTRIBUTE_TAGS,
    SKIP_TAGS,
)
from trawl.parse.charset import decode_html
from trawl.parse.extract import extract, parse_html
from trawl.testing.sampleweb import SampleWeb

native = pytest.importorskip("trawl._native", reason="the C module is not built")

BENCHMARK = Path("/work/shared/data/article-extraction-benchmark")
BOUNDS = (250_000, 40, 5, 1, 0)


def _walker() -> object:
    walk = _extract_walk._WALK
    assert walk is not None, "trawl._native is built but the C walk is not in use"
    assert walk.walker is not None, "trawl._native is built but the C walk is not in use"
    return walk.walker


def _c_walk(start: LexborNode, bound: int) -> Dom:
    walk = _extract_walk._WALK
    assert walk is not None and walk.walker is not None
    lists = walk.walker.walk(start.mem_id, bound, {}, {})
    assert lists is not None, "the C walk handed the page back to Python"
    return Dom(*lists)


def _assert_same(tree: LexborHTMLParser, bounds: tuple[int, ...] = BOUNDS) -> None:
    starts = [n for n in (tree.body, tree.root) if n is not None]
    for start in starts:
        for bound in bounds:
            expected = walk_python(start, max_elements=bound)
            got = _c_walk(start, bound)
            for name in Dom.__slots__:
                assert getattr(got, name) == getattr(expected, name), (name, bound)


def test_the_c_walk_is_in_use() -> None:
    walk = _extract_walk._WALK
    assert walk is not None, "trawl._native is built but the C walk is not in use"
    walker = walk.walker
    assert walker is not None, "trawl._native is built but the C walk is not in use"
    before = walker.walks
    extract("<html><body><p>One paragraph of text.</p></body></html>")
    assert walker.walks == before + 1


def test_an_unverified_selectolax_gets_the_python_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(selectolax, "__version__", "0.0.0")
    assert _extract_walk.native_walker() is None


def test_a_walk_disagreeing_on_the_probe_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _extract_walk.native_walker() is not None

    def other(start: LexborNode, *, max_elements: int) -> Dom:
        dom = walk_python(start, max_elements=max_elements)
        dom.line_links = [n + 1 for n in dom.line_links]
        return dom

    monkeypatch.setattr(_extract_walk, "walk_python", other)
    assert _extract_walk.native_walker() is None


def test_the_demo_sample_web() -> None:
    """Every page of ``make demo``'s web (its default size and seed)."""
    for _url, body in SampleWeb(30, 100, seed=0).pages():
        html, _ = decode_html(body, content_type=None)
        _assert_same(parse_html(html), bounds=(250_000,))


def test_extract_is_the_same_with_the_python_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    pages = [body for _, body in SampleWeb(6, 20, seed=4).pages()]
    pages += [_hostile(random.Random(seed)) for seed in range(40)]
    pages += [gzip.decompress(p.read_bytes()) for p in _benchmark_pages()]
    with_c = [extract(body) for body in pages]
    monkeypatch.setattr(_extract_walk, "_WALK", _extract_walk._Walk(None))  # Python only
    assert [extract(body) for body in pages] == with_c


@pytest.mark.parametrize("in_c", [True, False])
def test_verdicts_kept_across_pages_are_bounded(
    monkeypatch: pytest.MonkeyPatch, in_c: bool
) -> None:
    walk = _extract_walk._WALK
    assert walk is not None
    monkeypatch.setattr(_extract_walk, "_CACHED", 5)
    walker = walk.walker if in_c else None  # the Python walk keeps them alike
    kept = _extract_walk._Walk(walker)
    sizes: list[int] = []
    for seed in range(30):
        html, _ = decode_html(_hostile(random.Random(seed)), content_type=None)
        tree = parse_html(html)
        start = tree.body or tree.root
        assert start is not None
        # Kept verdicts or not, the page's Dom is the Python walk's.
        assert kept(start, 250_000) == walk_python(start, max_elements=250_000)
        alone = _extract_walk._Walk(walker)
        alone(start, 250_000)
        size = max(kept.cached())
        # At most the bound before the page, plus what the page itself adds.
        assert size <= 5 + max(alone.cached())
        sizes.append(size)
    assert any(later < earlier for earlier, later in itertools.pairwise(sizes))  # emptied


def _benchmark_pages() -> list[Path]:
    return sorted((BENCHMARK / "html").glob("*.html.gz")) if BENCHMARK.is_dir() else []


@pytest.mark.skipif(not BENCHMARK.is_dir(), reason="the extraction benchmark is not here")
def test_the_extraction_benchmark_pages() -> None:
    paths = _benchmark_pages()
    assert len(paths) > 100
    for path in paths:
        html, _ = decode_html(gzip.decompress(path.read_bytes()), content_type=None)
        _assert_same(parse_html(html))


# -- hostile HTML ----------------------------------------------------------------------
_PICKS = [
    sorted(BLOCK_TAGS),
    sorted(NO_ATTRIBUTE_TAGS | {"span", "label", "foo", "DIV", "Span"}),
    ["a", "a", "br", "img", "pre", "x-box", "my-el-", "svg", "math", "table", "tr", "td"],
    sorted(BOILERPLATE_TAGS),
]
# Skipped elements, some of them raw text to their end tag: written whole.
_SKIPPED = sorted(SKIP_TAGS - {"frameset", "frame", "head", "plaintext"})
_CLASS_WORDS = [
    *sorted(HIDDEN_TOKENS),
    *[
        "comment",
        "sidebar",
        "article-body",
        "Content",
        "byline",
        "share",
        "footer",
        "ad-break",
        "hid",
        "menu",
        "main",
        "post-date",
        "dates",
        "update",
        "État",
        "CAPTION",
        "caption",
        "credit",
    ],
]
_SPACES = [" ", "  ", "\n", "\t", "\r\n", "\xa0", "\u2003", "\u3000", "\x85", "\x1c", "\v", "\f"]
_WORDS = ["word", "Ünï", "中文", "\U0001f600", "&amp;", "&nbsp;", "&#x2003;", "&#0;", "a.b"]
_BAD = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82"]


def _text(rng: random.Random) -> bytes:
    out = []
    for _ in range(rng.randrange(1, 8)):
        if rng.random() < 0.1:
            out.append(rng.choice(_BAD))
        else:
            out.append(rng.choice(_WORDS if rng.random() < 0.6 else _SPACES).encode())
    return b"".join(out)


def _attrs(rng: random.Random) -> bytes:
    out = []
    for _ in range(rng.choice((0, 0, 1, 2, 3))):
        choice = rng.randrange(9)
        if choice < 3:
            words = " ".join(rng.choice(_CLASS_WORDS) for _ in range(rng.randrange(0, 3)))
            out.append(f'{rng.choice(["class", "id", "CLASS"])}="{words}"'.encode())
        elif choice == 3:
            role = rng.choice([*sorted(BOILERPLATE_ROLES), "Navigation", "main", ""])
            out.append(f'role="{role}"'.encode())
        elif choice == 4:
            style = rng.choice(["display:none", "DISPLAY : None", "visibility: hidden", "", "x"])
            out.append(f'style="{style}"'.encode())
        elif choice == 5:
            out.append(rng.choice([b"hidden", b'aria-hidden="true"', b'aria-hidden="TRUE"']))
        elif choice == 6:
            out.append(b'class="a" class="hidden"')  # a duplicate: the parser keeps one
        elif choice == 7:
            out.append(b'class="' + rng.choice(_BAD) + b'x" data-' + rng.choice(_BAD) + b"=1")
        else:
            out.append(b"id")
    return b" ".join(out)


def _hostile(rng: random.Random) -> bytes:
    """A page of random nesting (tags left open, stray closers), attributes and text."""
    out = [rng.choice([b"", b"<!DOCTYPE html>", b"<html><head><title>t</title></head>"])]
    if rng.random() < 0.8:
        out.append(b"<body " + _attrs(rng) + b">")
    open_tags: list[str] = []
    for _ in range(rng.randrange(5, 300)):
        roll = rng.random()
        if roll < 0.33:
            group = rng.choices(_PICKS, weights=(45, 30, 23, 2))[0]
            tag = rng.choice(group)
            out.append(b"<" + tag.encode() + b" " + _attrs(rng) + b">")
            open_tags.append(tag)
        elif roll < 0.35:
            tag = rng.choice(_SKIPPED)
            out.append(f"<{tag}>".encode() + _text(rng) + f"</{tag}>".encode())
        elif roll < 0.6 and open_tags:
            out.append(f"</{open_tags.pop()}>".encode())
        elif roll < 0.65:
            out.append(rng.choice([b"<!-- c -->", b"</p>", b"</div>", b"<?pi?>", b"<br/>"]))
        else:
            out.append(_text(rng))
    return b"".join(out)


def _parse(data: bytes) -> LexborHTMLParser:
    return LexborHTMLParser(data, options=LexborDocumentOptions.WO_EVENTS)


@pytest.mark.parametrize("seed", range(300))
def test_hostile_html(seed: int) -> None:
    _assert_same(_parse(_hostile(random.Random(seed))))


@pytest.mark.parametrize(
    "unit", [b"<div>", b"<span>", b"<div><a href=x>", b"<pre>a\n", b"<nav>", b"<p class=x>t"]
)
def test_ten_thousand_deep(unit: bytes) -> None:
    _assert_same(_parse(b"<body>" + unit * 10_000 + b"end"), bounds=(250_000, 100, 2))


def test_more_tag_names_than_the_walker_memoises() -> None:
    """Past its bound of remembered names the walker classifies each name on use."""
    names = [f"x-t{i}" if i % 3 else f"t{i}" for i in range(1_500)]
    page = "".join(f'<{n} class="c{i % 7}">text {i}<p>p</p></{n}>' for i, n in enumerate(names))
    _assert_same(_parse(b"<body><div>" + page.encode() + b"</div>"))
