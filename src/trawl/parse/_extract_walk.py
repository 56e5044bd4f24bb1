"""The extractor's DOM walk: in C when it is known to give the Python walk's result.

``_extract_dom.walk_python`` is the reference. ``trawl._native.DomWalker`` does the
same walk in C, reading Lexbor's nodes in place (no ``LexborNode`` object per node,
which was most of the Python walk's cost). It reads selectolax's structs directly, so
it is only used when

- ``trawl._native`` is built (it is optional: no C compiler, no C walk),
- selectolax is a version whose Lexbor struct layout was checked against its
  ``lexbor.pxd`` (``_VERIFIED``; a new version needs that check and an entry here),
- and, once per process, the C reads of a probe document agree with Lexbor's own
  accessors and the C walk of it gives a ``Dom`` equal to the Python walk's, field
  by field, over every branch of the walk (``_PROBE``).

Otherwise every page is walked in Python (logged once at debug level). The C walk
itself hands a page back to Python when the page holds something it does not
reproduce (``DomWalker.walk`` returns None).
"""

from __future__ import annotations

import logging

import selectolax
from selectolax.lexbor import LexborDocumentOptions, LexborHTMLParser, LexborNode

from trawl.parse._extract_dom import Dom, native_tables, walk_python

try:
    from trawl import _native
except ImportError:  # pragma: no cover - not built (no C compiler): the Python walk
    _native = None  # type: ignore[assignment]

__all__ = ["Dom", "native_walker", "walk"]

_log = logging.getLogger(__name__)

# selectolax versions whose Lexbor structs (lxb_dom_node_t, lxb_dom_character_data_t)
# csrc/lexbor_view.h mirrors, checked against their lexbor.pxd.
_VERIFIED = frozenset({"1.0.2"})

# Every branch of the walk: text and white-space-only text (ASCII and Unicode), comments,
# doctype, skipped subtrees and their counters, inputs, embeds, br, img, nested links,
# <pre> with newlines and links, hidden attributes, styles and aria-hidden, class/id
# signatures on blocks and inlines (hidden, boilerplate, meta), custom elements,
# landmark roles and tags, duplicate and empty attributes, foreign content (SVG, MathML,
# CDATA, a processing instruction), invalid UTF-8 in text, names and values, and depth.
_PROBE = (
    b"<!DOCTYPE html><html><head><title>Probe</title><meta charset=utf-8></head>"
    b'<body class="Body Main" id="top" role="main"><!-- comment -->\n  '
    b'<header class="site-header"><nav><a href="/">Home</a> <a href="/a">About</a></nav>'
    b'</header><div class="article-content" id="Story"><h1>Title \xc3\xa9</h1>\n'
    b'<p>First <b>bold</b> <a href="/x"> link <i>nested <a href="/y">inner</a></i> </a>'
    b" text.<br>after break<br></p><p>   </p>\n\t<p>\xc2\xa0\xe2\x80\x83</p>"
    b"<p>a<b>\xe2\x80\x83</b>b<i>\xc2\x85</i>c</p>"
    b'<pre>line one\n  line <a href="/p">two</a>\n\n\tline three\n</pre><pre></pre>'
    b'<span class="byline author">By someone</span> <span class="sr-only">gone</span>'
    b'<span class="promo share-tools">x</span> <em class="ignored">plain</em>'
    b'<span class="HIDDEN">hid</span><span id="main-date">1 May</span>'
    b'<div hidden>hidden div</div><div style="display: none">styled</div>'
    b'<div style="color:red">shown</div><div style="">empty style</div>'
    b'<div aria-hidden="true">aria</div><div aria-hidden="false">not aria</div>'
    b'<div class="d-none">d-none</div><section class="visually-hidden x">vh</section>'
    b'<my-widget class="comment-box">custom</my-widget><x-y>xy</x-y>'
    b'<div role="navigation">role nav</div><div role="Search">role search</div>'
    b'<span role="menu">inline menu</span><aside>aside</aside><footer>foot</footer>'
    b"<figcaption>cap</figcaption><figure><img src=a.png><figcaption>c2</figcaption>"
    b"</figure><img src=b.png><input type=text><button>b</button><select><option>o"
    b"</select><textarea>t</textarea><iframe src=x></iframe><video></video><object>"
    b"</object><embed><audio></audio><script>var x = 1;</script><style>p{}</style>"
    b"<noscript>ns</noscript><template><p>tpl</p></template>"
    b'<svg><text>svg</text><a xlink:href="/s" href="/t">s</a><![CDATA[cdata]]><?pi x?>'
    b"<foreignObject><p>fo</p></foreignObject></svg><math><mi>x</mi></math>"
    b"<ul><li>one</li><li>two <ul><li>three</li></ul></li></ul>"
    b"<table><tr><td>a</td><td>b <b>c</b></td></tr></table><dl><dt>t<dd>d</dl>"
    b"<p>Unicode\xc2\xa0spaces\xe2\x80\x83and\xe3\x80\x80ideographic \xc2\x85 nel \x1c"
    b" fs\x0b vt \x0c ff\r\ncr</p><p>bad \xff\xfe bytes \xc3 here \xed\xa0\x80</p>"
    b'<p class="" id>empty attrs</p><p class="A" class="B" id="c" id="d">dup</p>'
    b'<div class="x\xff" data-\xfe="1" id="\xc3\xa9T\xc3\x89">odd bytes</div>'
    b'<div class="\xc3\x89TAT main">\xc3\x89tat</div><p class="Caption">short</p>'
    b"<p>a<wbr>b<font>f</font><code>  code  </code></p>"
    + b"<div><span>" * 40
    + b"deep"
    + b"</span></div>" * 40
    + b"<center>tail</center></div>"
    b'<div class="sidebar related">side <a href="/r">r</a></div>text at the end'
    b"</body></html>"
)
# Element bounds the walk is checked at (the extractor's own is far larger).
_PROBE_BOUNDS = (1_000_000, 40, 3, 1, 0)


def _library_path() -> str:
    import selectolax.lexbor as lexbor_module

    return str(lexbor_module.__file__)


def _probe_agrees(walker: _native.DomWalker) -> bool:
    tree = LexborHTMLParser(_PROBE, options=LexborDocumentOptions.WO_EVENTS)
    root, body = tree.root, tree.body
    if root is None or body is None or not walker.check(root.mem_id):
        return False
    starts: list[LexborNode] = [body, root]
    for start in starts:
        for bound in _PROBE_BOUNDS:
            verdicts: dict[str, tuple[bool, int, int]] = {}
            tokens: dict[str, int] = {}
            lists = walker.walk(start.mem_id, bound, verdicts, tokens)
            if lists is None or Dom(*lists) != walk_python(start, max_elements=bound):
                return False
    return True


def native_walker() -> _native.DomWalker | None:
    """A C walker when this process may use one (see the module's note), else None."""
    if _native is None:
        return None
    version = getattr(selectolax, "__version__", "")
    if version not in _VERIFIED:
        _log.debug("DOM walk in Python: selectolax %s's layout is not verified", version)
        return None
    try:
        walker = _native.DomWalker(_library_path(), **native_tables())
    except ImportError as e:  # a Lexbor function missing from this build
        _log.debug("DOM walk in Python: %s", e)
        return None
    if not _probe_agrees(walker):
        _log.debug("DOM walk in Python: the C walk disagrees on the probe document")
        return None
    return walker


# Class verdicts kept across pages, up to this many signatures and as many tokens (a
# site's pages repeat their class names): some 2 MB at most. On the 181 pages of the
# extraction benchmark (181 sites) the C walk took 0.27 ms a page with verdicts per
# page and 0.15 with them kept. A verdict is a function of its signature alone.
_CACHED = 10_000


class _Walk:
    """Every page's walk in this process: in C with ``walker`` (else, and for a page
    the C walk hands back, in Python), the class verdicts kept across pages by both
    (emptied when one passes ``_CACHED``)."""

    def __init__(self, walker: _native.DomWalker | None) -> None:
        self.walker = walker
        self._verdicts: dict[str, tuple[bool, int, int]] = {}
        self._tokens: dict[str, int] = {}

    def __call__(self, start: LexborNode, max_elements: int) -> Dom:
        verdicts, tokens = self._verdicts, self._tokens
        if len(verdicts) > _CACHED or len(tokens) > _CACHED:
            verdicts.clear()
            tokens.clear()
        if self.walker is not None:
            # ``start`` holds its tree alive for the call.
            lists = self.walker.walk(start.mem_id, max_elements, verdicts, tokens)
            if lists is not None:
                return Dom(*lists)
        return walk_python(start, max_elements=max_elements, verdicts=verdicts, token_cache=tokens)

    def cached(self) -> tuple[int, int]:
        """Signatures and tokens whose verdicts are kept."""
        return len(self._verdicts), len(self._tokens)


# Chosen once per process: the tables and the probe do not change.
_WALK = _Walk(native_walker())


def walk(start: LexborNode, *, max_elements: int) -> Dom:
    """Walk the subtree under ``start`` (normally ``<body>``) into a ``Dom``."""
    return _WALK(start, max_elements)
