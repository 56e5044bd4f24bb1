"""Whether a fetched page is rendered in the browser: the render policy, pure.

``never`` renders nothing, ``always`` every HTML page; ``auto`` renders a page whose
HTML looks like an application shell, one a browser would build its text from:

- little main text: fewer than ``MIN_TEXT`` characters of visible text (scripts,
  styles, templates, ``<noscript>`` and SVG left out), and one of
- a mount point: an element a framework renders into (``id`` root, app, __next,
  __nuxt, ___gatsby, svelte; ``ng-app``, ``data-reactroot``, ``data-server-rendered``)
  with next to no text in it;
- a ``<noscript>`` asking for JavaScript;
- script-heavy: more bytes of inline script than of text, or ``MANY_SCRIPTS``
  external scripts, or any script and almost no text at all;

or a page of a host learned to need it (``fetch/render/hints.py``). A page without
``<script`` in its bytes is never a shell (one ``in`` over the body, no parse), so a
web without JavaScript costs ``auto`` almost nothing. The decision carries its reason,
which the crawl records with the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from trawl.config import RenderMode
from trawl.parse.charset import decode_html

__all__ = ["MIN_TEXT", "Decision", "PageShape", "decide", "page_shape"]

MIN_TEXT: Final = 600  # characters of visible text below which a page may be a shell
MANY_SCRIPTS: Final = 4
_BARE: Final = 40  # characters a page (or a mount point) has when it is really empty
_MOUNT_IDS: Final = ("root", "app", "__next", "__nuxt", "___gatsby", "svelte", "main-app")
_MOUNT_SELECTOR: Final = ", ".join(
    [*(f'[id="{i}"]' for i in _MOUNT_IDS), "[ng-app]", "[data-reactroot]", "[data-server-rendered]"]
)
_INVISIBLE: Final = ["script", "style", "noscript", "template", "svg"]
_ASKS_FOR_JS: Final = re.compile(r"javascript|enable js|\bjs\b.{0,20}(enable|requir)", re.I)


@dataclass(frozen=True, slots=True)
class PageShape:
    """What the render policy looks at in a page's HTML."""

    text_chars: int  # visible text, whitespace collapsed
    scripts: int  # <script> elements
    external_scripts: int  # <script src=...>
    inline_script_bytes: int
    mount: str | None  # the empty mount point, as a CSS selector ("#root")
    noscript_asks_js: bool


@dataclass(frozen=True, slots=True)
class Decision:
    render: bool
    reason: str
    by_hint: bool = False  # rendered because the host was learned to need it

    def __str__(self) -> str:
        return ("rendered: " if self.render else "not rendered: ") + self.reason


def page_shape(body: bytes, content_type: str | None = None) -> PageShape:
    """Measure a page (decoded as the parser would decode it)."""
    if b"<script" not in body and b"<SCRIPT" not in body and b"<Script" not in body:
        # No scripts: nothing a browser would add (a cheap look at the bytes).
        return PageShape(len(body), 0, 0, 0, None, False)
    # Imported here: a crawl that renders nothing (the default) holds no Lexbor.
    from selectolax.lexbor import LexborHTMLParser

    text, _encoding = decode_html(body, content_type=content_type)
    tree = LexborHTMLParser(text)
    scripts = tree.css("script")
    external = sum(1 for s in scripts if s.attributes.get("src"))
    inline = sum(len(s.text(deep=False) or "") for s in scripts if not s.attributes.get("src"))
    asks = any(_ASKS_FOR_JS.search(n.text(deep=True) or "") for n in tree.css("noscript"))
    mount = None
    for node in tree.css(_MOUNT_SELECTOR):
        if len(_visible(node.text(deep=True, separator=" ", strip=True))) <= _BARE:
            ident = node.attributes.get("id")
            mount = f"#{ident}" if ident else f"<{node.tag}>"
            break
    tree.strip_tags(_INVISIBLE)
    body_node = tree.body
    visible = _visible(body_node.text(deep=True, separator=" ", strip=True)) if body_node else ""
    return PageShape(len(visible), len(scripts), external, inline, mount, asks)


def _visible(text: str) -> str:
    return " ".join(text.split())


def shell_reason(shape: PageShape) -> str | None:
    """Why the page looks like an application shell, or None."""
    chars = shape.text_chars
    if shape.scripts == 0 or chars >= MIN_TEXT:
        return None
    if shape.mount is not None:
        return f"empty mount point {shape.mount}, {chars} characters of text"
    if shape.noscript_asks_js:
        return f"<noscript> asks for JavaScript, {chars} characters of text"
    if shape.inline_script_bytes > chars:
        inline = shape.inline_script_bytes
        return f"script-heavy ({inline} bytes of inline script), {chars} characters of text"
    if shape.external_scripts >= MANY_SCRIPTS:
        return f"script-heavy ({shape.external_scripts} scripts), {chars} characters of text"
    if chars <= _BARE:
        return f"{shape.scripts} script(s) and {chars} characters of text"
    return None


def decide(
    mode: RenderMode,
    body: bytes,
    *,
    content_type: str | None = None,
    learned: bool = False,
) -> tuple[Decision, PageShape | None]:
    """Render this page or not, and why; the page's shape when it was measured."""
    if mode == "never":
        return Decision(False, "never"), None
    if mode == "always":
        return Decision(True, "always"), None
    shape = page_shape(body, content_type)
    reason = shell_reason(shape)
    if reason is not None:
        return Decision(True, f"auto: {reason}"), shape
    if learned and shape.scripts:
        return Decision(True, "auto: the host's pages needed rendering", by_hint=True), shape
    if shape.scripts == 0:
        return Decision(False, "auto: no scripts"), shape
    return Decision(False, f"auto: {shape.text_chars} characters of text"), shape
