"""The render policy: which pages look like application shells, and why."""

from __future__ import annotations

import pytest

from trawl.fetch.render.decide import MIN_TEXT, decide, page_shape, shell_reason
from trawl.fetch.render.hints import gained

ARTICLE = "<p>" + "A sentence of real server-rendered text about the page. " * 40 + "</p>"


def page(body: str, head: str = "") -> bytes:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>".encode()


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('<div id="root"></div><script src="/app.js"></script>', "empty mount point #root"),
        ('<div id="__next"><p>Loading…</p></div><script src="/a.js"></script>', "#__next"),
        ('<div ng-app="x"></div><script src="/a.js"></script>', "empty mount point <div>"),
        (
            "<p>Hello</p><noscript>Please enable JavaScript.</noscript><script src=a.js></script>",
            "<noscript> asks for JavaScript",
        ),
        ("<p>Hi</p><script>" + "var x = 1;" * 50 + "</script>", "bytes of inline script"),
        ("<p>Hi</p>" + "<script src=s.js></script>" * 4, "script-heavy (4 scripts)"),
        ("<script src=s.js></script>", "1 script(s) and 0 characters of text"),
    ],
)
def test_shells_are_rendered_under_auto_with_their_reason(body: str, reason: str) -> None:
    decision, shape = decide("auto", page(body))
    assert decision.render, decision
    assert reason in decision.reason
    assert str(decision).startswith("rendered: auto: ")
    assert shape is not None and shape.text_chars < MIN_TEXT


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (ARTICLE, "auto: no scripts"),
        ('<div id="root">' + ARTICLE + '</div><script src="/app.js"></script>', "characters"),
        (ARTICLE + "<script>" + "x=1;" * 5000 + "</script>", "characters of text"),
        ("<p>A short page with a little text and no script at all.</p>", "no scripts"),
        # A short page with one analytics script is not a shell: it says something.
        (
            "<p>A short note of some sixty characters, linked from elsewhere.</p>"
            "<script src=/analytics.js></script>",
            "characters of text",
        ),
    ],
)
def test_pages_with_their_text_are_not_rendered(body: str, reason: str) -> None:
    decision, _shape = decide("auto", page(body))
    assert not decision.render, decision
    assert reason in decision.reason


def test_never_and_always_do_not_look_at_the_page() -> None:
    shell = page('<div id="root"></div><script src="/app.js"></script>')
    assert decide("never", shell) == (decide("never", b"")[0], None)
    assert not decide("never", shell)[0].render
    always, shape = decide("always", page(ARTICLE))
    assert always.render and always.reason == "always" and shape is None


def test_a_learned_host_renders_its_pages_with_scripts_only() -> None:
    with_script = page(ARTICLE + "<script src=/app.js></script>")
    decision, _ = decide("auto", with_script, learned=True)
    assert decision.render and "needed rendering" in decision.reason
    assert not decide("auto", page(ARTICLE), learned=True)[0].render


def test_shape_counts_visible_text_only() -> None:
    shape = page_shape(
        page(
            '<div id="app"></div><style>p{}</style><template><p>hidden</p></template>'
            "<script>var a = 'not text';</script><noscript>Enable JavaScript</noscript>"
            "<p>Seen text</p>"
        )
    )
    assert shape.text_chars == len("Seen text")
    assert shape.mount == "#app"
    assert shape.noscript_asks_js
    assert shape.scripts == 1 and shape.external_scripts == 0
    assert shape.inline_script_bytes == len("var a = 'not text';")
    assert shell_reason(shape) is not None


def test_a_page_without_scripts_is_not_parsed() -> None:
    body = b"<html><body><p>plain</p></body></html>"
    shape = page_shape(body)
    assert shape.scripts == 0 and shape.mount is None
    assert shell_reason(shape) is None


def test_gain_means_the_render_built_the_text() -> None:
    assert gained(0, 400)
    assert gained(20, 2000)
    assert not gained(20, 100)  # a line of script-built text is no article
    assert not gained(1000, 1500)  # the text was there already
