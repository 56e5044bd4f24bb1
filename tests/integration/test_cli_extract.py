"""`trawl extract`: the crawl's own page parse on a local file, through the real command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TRAWL = [sys.executable, "-m", "trawl"]

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Dosa at home</title><meta name="robots" content="nofollow">
<link rel="license" href="https://creativecommons.org/licenses/by/4.0/"></head>
<body><nav><a href="/menu">Menu</a> <a href="/about">About</a></nav>
<article><h1>Dosa at home</h1>
<p>A dosa is a thin pancake made from a fermented batter of rice and black lentils.
It is eaten across South India, usually with chutney and sambar.</p>
<p>Soak the rice and the lentils separately for six hours, grind them, and leave the
batter overnight in a warm place so that it ferments and rises.</p>
<p>Spread a ladle of batter on a hot griddle in a thin circle and cook it until the
underside is golden and crisp.</p></article>
<footer>Copyright 2026 Example Kitchen. All rights reserved.</footer></body></html>"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TRAWL, *args], capture_output=True, text=True, timeout=60, check=False)


def test_extract_prints_what_the_crawl_keeps(tmp_path: Path) -> None:
    html = tmp_path / "page.html"
    html.write_text(PAGE)
    done = _run("extract", str(html), "--url", "https://kitchen.example/dosa")
    assert done.returncode == 0, done.stderr
    assert "title:      Dosa at home" in done.stdout
    assert "language:   en" in done.stdout
    assert "nofollow" in done.stdout
    assert "creativecommons.org/licenses/by/4.0" in done.stdout
    assert "fermented batter of rice" in done.stdout
    assert "All rights reserved" not in done.stdout  # boilerplate removed


def test_extract_json_has_the_signals(tmp_path: Path) -> None:
    html = tmp_path / "page.html"
    html.write_bytes(PAGE.encode())
    done = _run("extract", str(html), "--url", "https://kitchen.example/dosa", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["title"] == "Dosa at home"
    assert out["language"] == "en"
    assert out["links"] == []  # nofollow: no links kept
    assert "nofollow" in out["directives"]
    assert out["quality"]["words"] > 50
    assert len(out["content_hash"]) == 64


def test_extract_header_charset_and_errors(tmp_path: Path) -> None:
    html = tmp_path / "latin.html"
    body = "<html><body><article><p>" + "Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e. " * 30
    html.write_bytes((body + "</p></article></body></html>").encode("latin-1"))
    done = _run("extract", str(html), "--header", "Content-Type: text/html; charset=latin-1")
    assert done.returncode == 0, done.stderr
    assert "Caf\u00e9 cr\u00e8me" in done.stdout
    missing = _run("extract", str(tmp_path / "nope.html"))
    assert missing.returncode == 2
    assert "cannot read" in missing.stderr
    bad = _run("extract", str(html), "--header", "no colon here")
    assert bad.returncode == 2
    assert "bad --header" in bad.stderr
