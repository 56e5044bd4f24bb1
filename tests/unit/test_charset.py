"""decode_html: each step of the decoding order, and that nothing raises."""

from __future__ import annotations

import codecs
import random
import zlib

import pytest

from trawl.parse._charset_labels import lookup
from trawl.parse.charset import decode_html, decode_page

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


# -- implausible decodes: lying declarations, binary bytes (issue 16) ------------------------

ENGLISH = (
    "<!DOCTYPE html><html><head><title>River towns</title></head><body><article><p>"
    + "The river town kept its old bridge and its market, and the people walked there. " * 20
    + "</p></article></body></html>"
)


def test_utf16_header_on_an_ascii_body_is_a_lie() -> None:
    # Believed, every two ASCII bytes became one CJK character: mojibake stored as "zh".
    decoded = decode_page(ENGLISH.encode("ascii"), content_type="text/html; charset=utf-16")
    assert (decoded.text, decoded.encoding, decoded.problem) == (ENGLISH, "utf-8", None)


@pytest.mark.parametrize("label", ["utf-16be", "utf-16le", "ucs-2"])
def test_every_utf16_label_on_ascii_bytes_is_a_lie(label: str) -> None:
    text, encoding = decode_html(ENGLISH.encode(), content_type=f"text/html; charset={label}")
    assert (text, encoding) == (ENGLISH, "utf-8")


def test_utf16_bom_on_an_ascii_body_is_a_lie() -> None:
    decoded = decode_page(codecs.BOM_UTF16_LE + ENGLISH.encode(), content_type=None)
    assert decoded.text == ENGLISH
    assert decoded.problem is None


def test_utf16_declared_with_the_other_byte_order_is_read_in_the_order_the_bytes_show() -> None:
    body = PAGE.encode("utf-16-be")
    assert decode_html(body, content_type="text/html; charset=utf-16") == (PAGE, "utf-16be")


def test_undeclared_utf16_without_bom_is_recognised_by_its_zero_bytes() -> None:
    decoded = decode_page(ENGLISH.encode("utf-16-le"), content_type="text/html")
    assert (decoded.text, decoded.encoding, decoded.problem) == (ENGLISH, "utf-16le", None)


@pytest.mark.parametrize("label", ["utf-32", "utf-32le", "ucs-4"])
def test_utf32_header_on_an_ascii_body_is_ignored(label: str) -> None:
    decoded = decode_page(ENGLISH.encode(), content_type=f"text/html; charset={label}")
    assert (decoded.text, decoded.encoding, decoded.problem) == (ENGLISH, "utf-8", None)


@pytest.mark.parametrize(("codec", "name"), [("utf-32-le", "utf-32le"), ("utf-32-be", "utf-32be")])
def test_a_real_utf32_body_is_decoded_not_taken_for_binary(codec: str, name: str) -> None:
    # Valid UTF-8 (NULs are), but three NULs in four bytes is UTF-32's shape.
    decoded = decode_page(PAGE.encode(codec), content_type="text/html; charset=utf-32")
    assert (decoded.text, decoded.encoding, decoded.problem) == (PAGE, name, None)


def test_random_bytes_as_html_are_binary_content() -> None:
    body = random.Random(16).randbytes(64 * 1024)
    decoded = decode_page(body, content_type="text/html")
    assert decoded.problem == "binary content"


@pytest.mark.parametrize("label", [None, "utf-8", "big5", "shift_jis", "utf-16", "windows-1252"])
def test_random_bytes_are_binary_whatever_the_label(label: str | None) -> None:
    body = random.Random(label).randbytes(8 * 1024)
    ctype = f"text/html; charset={label}" if label else "text/html"
    assert decode_page(body, content_type=ctype).problem == "binary content"


@pytest.mark.parametrize("size", [1, 16, 4096, 1024 * 1024])
def test_a_body_of_nuls_is_binary_content(size: int) -> None:
    assert decode_page(bytes(size), content_type="text/html").problem == "binary content"


def test_png_and_zip_bytes_are_binary_content() -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + random.Random(1).randbytes(3000)
    header = b"PK\x03\x04\x14\x00\x00\x00\x08\x00"
    deflated = zlib.compress(b"<html>" + random.Random(2).randbytes(5000))
    for body in (png, header + deflated):
        assert decode_page(body, content_type="text/html").problem == "binary content"


def test_text_that_no_encoding_decodes_is_undecodable() -> None:
    # Declared UTF-8, every high byte invalid in it, and nothing else fits better.
    body = b"<p>" + ("\ufffd" * 400).encode() + b"</p>"
    decoded = decode_page(body, content_type="text/html; charset=utf-8")
    assert decoded.problem == "undecodable text"


def test_a_mostly_valid_page_with_a_few_bad_bytes_is_kept() -> None:
    good = ENGLISH.replace("walked", "walked — “slowly” — ").encode()
    body = good[:300] + b"\xff" + good[300:900] + b"\xc3(" + good[900:]
    for ctype in ("text/html; charset=utf-8", "text/html", "text/html; charset=iso-8859-1"):
        decoded = decode_page(body, content_type=ctype)
        assert decoded.problem is None, ctype
        assert decoded.encoding == "utf-8", ctype  # not windows-1252 mojibake
        assert "“slowly”" in decoded.text
        assert decoded.text.count("\ufffd") == 2


def test_a_page_with_a_few_nul_and_control_bytes_is_kept() -> None:
    body = ENGLISH.encode()
    body = body[:200] + b"\x00NUL\x00" + body[200:500] + b"\x01\x02" + body[500:]
    decoded = decode_page(body, content_type="text/html")
    assert decoded.problem is None
    assert decoded.encoding == "utf-8"


def test_a_little_junk_in_a_sampled_window_does_not_condemn_a_long_page() -> None:
    junk = random.Random(3).randbytes(300)
    body = junk + ENGLISH.encode() * 20
    decoded = decode_page(body, content_type="text/html")
    assert decoded.problem is None


def test_cp1252_and_cjk_pages_are_not_taken_for_broken_utf8() -> None:
    french = "<p>Le café est très agréable à Paris, où l’été est doux.</p>" * 20
    assert decode_html(french.encode("cp1252"), content_type="text/html") == (
        french,
        "windows-1252",
    )
    chinese = "<p>这是中文文本。北京的天气很好，我们去公园散步吧。</p>" * 20
    assert decode_html(chinese.encode("gbk"), content_type="text/html; charset=gbk") == (
        chinese,
        "gbk",
    )
    japanese = "<p>日本語のテキストです。東京の天気は晴れです。</p>" * 20
    decoded = decode_html(japanese.encode("cp932"), content_type="text/html; charset=shift_jis")
    assert decoded == (japanese, "shift_jis")


def test_decode_html_is_decode_page_without_the_verdict() -> None:
    body = ENGLISH.encode("ascii")
    decoded = decode_page(body, content_type="text/html; charset=utf-16")
    assert decode_html(body, content_type="text/html; charset=utf-16") == (
        decoded.text,
        decoded.encoding,
    )
