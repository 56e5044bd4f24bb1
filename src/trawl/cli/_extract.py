"""``trawl extract``: what the parse stage keeps from one HTML file, for debugging."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "extract",
        help="show the title, main text, language and signals the crawl keeps from a page",
        description="Run the crawl's own page parse (parse/page.py) on a local HTML file: "
        "charset, directives, links, main text, language and quality signals.",
    )
    p.add_argument("html_file", type=Path, metavar="HTML_FILE")
    p.add_argument("--url", default="http://example.invalid/", help="the page's URL (for links)")
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME: VALUE",
        help="an HTTP response header, e.g. 'Content-Type: text/html; charset=latin-1'",
    )
    p.add_argument("--agent", action="append", default=[], help="product token (repeatable)")
    p.add_argument("--json", action="store_true", help="one JSON object instead of text")
    p.set_defaults(handler=_extract)


def _extract(args: argparse.Namespace) -> int:
    from trawl.parse.page import PageInput, ParseOptions, parse_page

    try:
        body = args.html_file.read_bytes()
    except OSError as exc:
        print(f"trawl extract: cannot read {args.html_file}: {exc.strerror}", file=sys.stderr)
        return 2
    headers = []
    for raw in args.header:
        name, sep, value = raw.partition(":")
        if not sep or not name.strip():
            print(f"trawl extract: bad --header {raw!r} (want 'Name: value')", file=sys.stderr)
            return 2
        headers.append((name.strip(), value.strip()))
    content_type = next((v for n, v in headers if n.lower() == "content-type"), None)
    options = ParseOptions(agents=tuple(args.agent) or ("trawl",), quality=True)
    page = parse_page(PageInput(args.url, tuple(headers), body, content_type), options)
    if args.json:
        opts = orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY
        sys.stdout.write(orjson.dumps(page, default=_json_default, option=opts).decode() + "\n")
        return 0 if page.error is None else 1
    if page.error is not None:
        print(f"error:      {page.error}")
        return 1
    print(f"title:      {page.title}")
    lang = f"{page.language} ({page.language_confidence:.2f})" if page.language else "unknown"
    print(f"language:   {lang}")
    print(f"encoding:   {page.encoding}")
    print(f"directives: {', '.join(sorted(page.directives)) or 'none'}")
    print(f"canonical:  {page.canonical or 'none'}")
    print(f"license:    {page.license or 'none'}")
    print(f"links:      {len(page.links)}")
    if page.quality is not None:
        q = page.quality
        print(f"quality:    {q.words} words, mean word length {q.mean_word_length:.1f}, ", end="")
        print(f"{q.terminal_punct_line_share:.0%} lines end in punctuation")
    print(f"hash:       {page.content_hash or 'none (no text)'}")
    print()
    print(page.text)
    return 0


def _json_default(value: Any) -> Any:
    """What orjson does not encode by itself (it does dataclasses and tuples)."""
    if isinstance(value, frozenset | set):
        return sorted(value)
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")
