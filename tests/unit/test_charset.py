"""decode_html: each step of the decoding order, and that nothing raises."""

from __future__ import annotations

import codecs

import pytest

from trawl.parse._charset_labels import lookup
from trawl.parse.charset import decode_html

PAGE = "<html><body><p>Übermäßig schön, “quoted” — naïve café</p></body></html>"


@pytest.mark.parametrize(
    ("bom", "codec", "name"),
    [
        (codecs.BOM_UTF8, "utf-8", "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le", "utf-16le"),
        (codecs.BOM_UTF16_BE, "utf-16-be", "utf-16be"),
    ],
)
def test_bom_wins_over_everything(bom: bytes, codec: str, name: str) -> None:
    body = bom + PAGE.encode(codec)
    text, encoding = decode_html(body, content_type="text/html; charset=windows-1251")
    assert (text, encoding) == (PAGE, name)


def test_valid_utf8_overrides_a_wrong_latin1_declaration() -> None:
    body = PAGE.encode("utf-8")
    assert decode_html(body, content_type="text/html; charset=ISO-8859-1") == (PAGE, "utf-8")


def test_ascii_is_utf8() -> None:
    assert decode_html(b"<p>plain</p>", content_type=None) == ("<p>plain</p>", "utf-8")


@pytest.mark.parametrize(
    ("text", "label", "codec", "name"),
    [
        ("<p>日本語のテキストです。東京</p>", "Shift_JIS", "cp932", "shift_jis"),
        ("<p>Пример русского текста</p>", "windows-1251", "cp1251", "windows-1251"),
        ("<p>这是中文文本。北京</p>", "GBK", "gbk", "gbk"),
        ("<p>这是中文文本。北京</p>", "gb2312", "gbk", "gbk"),
        ("<p>한국어 텍스트</p>", "euc-kr", "cp949", "euc-kr"),
    ],
)
def test_declared_charset_in_content_type(text: str, label: str, codec: str, name: str) -> None:
    body = text.encode(codec)
    assert decode_html(body, content_type=f'text/html; charset="{label}"') == (text, name)


def test_latin1_label_means_windows_1252_as_in_browsers() -> None:
    body = "<p>“curly” quotes – dash €</p>".encode("cp1252")
    text, encoding = decode_html(body, content_type="text/html; charset=latin1")
    assert encoding == "windows-1252"
    assert text == "<p>“curly” quotes – dash €</p>"


def test_meta_charset() -> None:
    text = '<html><head><meta charset="windows-1251"></head><body>Привет мир</body></html>'
    assert decode_html(text.encode("cp1251"), content_type="text/html") == (text, "windows-1251")


def test_meta_http_equiv() -> None:
    text = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
        "</head><body>日本語のテキスト</body></html>"
    )
    assert decode_html(text.encode("cp932"), content_type=None) == (text, "shift_jis")


def test_header_beats_meta() -> None:
    text = '<meta charset="shift_jis"><p>Пример русского текста</p>'
    body = text.encode("cp1251")
    assert decode_html(body, content_type="text/html; charset=cp1251")[1] == "windows-1251"


def test_meta_past_the_prescan_window_is_ignored() -> None:
    text = "<!--" + " " * 5000 + '--><meta charset="iso-8859-5"><p>Привет</p>'
    _, encoding = decode_html(text.encode("cp1251"), content_type=None)
    assert encoding != "iso-8859-5"


def test_undeclared_cp1252_text_is_detected_or_falls_back() -> None:
    text = (
        "<html><body><p>Le café est très agréable à Paris. Les élèves étudient à l’école où "
        "ils apprennent le français — c’est génial, même en été.</p></body></html>"
    ) * 3
    decoded, encoding = decode_html(text.encode("cp1252"), content_type=None)
    assert encoding in {"windows-1252", "iso-8859-15", "windows-1250"}
    assert "café" in decoded
    assert "élèves" in decoded


def test_undeclared_cyrillic_is_detected() -> None:
    text = (
        "<html><body><p>" + "Это пример русского текста на странице. " * 30 + "</p></body></html>"
    )
    decoded, encoding = decode_html(text.encode("cp1251"), content_type=None)
    assert encoding == "windows-1251"
    assert decoded == text


def test_garbage_bytes_never_raise() -> None:
    body = bytes(range(256)) * 20
    text, encoding = decode_html(body, content_type="text/html; charset=no-such-charset")
    assert isinstance(text, str)
    assert encoding


def test_empty_body() -> None:
    assert decode_html(b"", content_type=None) == ("", "utf-8")


def test_declared_utf16_without_bom_is_believed() -> None:
    body = PAGE.encode("utf-16-le")
    assert decode_html(body, content_type="text/html; charset=utf-16") == (PAGE, "utf-16le")


def test_meta_utf16_means_utf8() -> None:
    body = b'<meta charset="utf-16"><p>caf\xe9</p>'  # invalid UTF-8 byte
    assert decode_html(body, content_type=None)[1] == "utf-8"


def test_invalid_utf8_declared_utf8_is_decoded_with_replacement() -> None:
    text, encoding = decode_html(b"<p>caf\xe9 ok</p>", content_type="text/html; charset=utf-8")
    assert (text, encoding) == ("<p>caf\ufffd ok</p>", "utf-8")


@pytest.mark.parametrize(
    ("label", "name"),
    [
        ("ISO-8859-1", "windows-1252"),
        ("ascii", "windows-1252"),
        (" Latin1 ", "windows-1252"),
        ("x-sjis", "shift_jis"),
        ("ks_c_5601-1987", "euc-kr"),
        ("iso-8859-9", "windows-1254"),
        ("utf8", "utf-8"),
    ],
)
def test_whatwg_labels(label: str, name: str) -> None:
    codec = lookup(label)
    assert codec is not None
    assert codec.name == name


@pytest.mark.parametrize("label", ["rot13", "unicode_escape", "hz-gb-2312", "", "bogus"])
def test_labels_python_knows_but_browsers_do_not_are_refused(label: str) -> None:
    assert lookup(label) is None
