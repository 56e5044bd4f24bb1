"""`trawl robots check | crawl-delay | sitemaps`: robots.txt answers from a local file.

Thin over ``trawl.fetch.robots``: the file and ``--status`` go through ``rules_for_fetch``
exactly as a fetched robots.txt would, so the answers are the crawler's answers. Each
command prints one answer and exits 0; a bad file or argument prints one line on
stderr and exits 2.
"""

from __future__ import annotations

import argparse
import decimal
import sys
from collections.abc import Callable
from typing import Any

from trawl.fetch.robots import MAX_BYTES, RobotsRules, rules_for_fetch

_EXIT_USAGE = 2

_STATUS_HELP = (
    "HTTP status the file was served with (default 200), or 'error' for a network "
    "error; the file is read only for a 2xx status, otherwise the status alone decides "
    "(4xx: no rules; 429, 5xx, 1xx, 3xx, error: everything disallowed)"
)
_FILE_HELP = "robots.txt file, read as raw bytes (only the first 500 KiB count)"
_AGENT_HELP = (
    "product token, or several separated by commas (e.g. trawl,GPTBot,CCBot); "
    "a URL is disallowed if any of them is disallowed"
)


class _UsageError(Exception):
    """A bad argument or file: reported as one line, exit status 2."""


def _status(text: str) -> int | None:
    code = text.strip()
    if code.lower() == "error":
        return None
    status = int(code) if len(code) == 3 and code.isascii() and code.isdigit() else 0
    if not 100 <= status <= 599:
        raise _UsageError(
            f"invalid --status {text!r}: expected an HTTP status (100-599) or 'error'"
        )
    return status


def _rules(args: argparse.Namespace) -> RobotsRules:
    status = _status(args.status)
    body = b""
    if status is not None and 200 <= status <= 299:
        try:
            with open(args.robots_file, "rb") as file:
                body = file.read(MAX_BYTES + 1)  # the parser reads no more than this
        except OSError as error:
            reason = error.strerror or type(error).__name__
            raise _UsageError(f"cannot read {args.robots_file!r}: {reason}") from None
    return rules_for_fetch(status, body)


def _agents(text: str) -> list[str]:
    tokens = [token.strip() for token in text.split(",") if token.strip()]
    if not tokens:
        raise _UsageError(f"invalid AGENT {text!r}: expected one or more product tokens")
    return tokens


def format_seconds(seconds: float) -> str:
    """Shortest decimal that reads back as ``seconds``, without exponent or ``.0``."""
    text = format(decimal.Decimal(repr(seconds)), "f")
    return text[:-2] if text.endswith(".0") else text


def _check(args: argparse.Namespace) -> str:
    allowed = _rules(args).is_allowed(args.url, _agents(args.agent))
    return "allowed" if allowed else "disallowed"


def _crawl_delay(args: argparse.Namespace) -> str:
    delay = _rules(args).crawl_delay(_agents(args.agent))
    return "none" if delay is None else format_seconds(delay)


def _sitemaps(args: argparse.Namespace) -> str:
    return "\n".join(_rules(args).sitemaps)


def _run(answer: Callable[[argparse.Namespace], str]) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        try:
            text = answer(args)
        except _UsageError as error:
            print(f"trawl robots {args.robots_command}: {error}", file=sys.stderr)
            return _EXIT_USAGE
        if text:
            try:
                print(text)
            except UnicodeEncodeError:  # a terminal that cannot show some URL character
                print(text.encode("ascii", "backslashreplace").decode("ascii"))
        return 0

    return handler


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "robots",
        help="answer robots.txt questions from a local file (RFC 9309)",
        description="Answer robots.txt questions from a local file, as the crawler would.",
    )
    commands = parser.add_subparsers(dest="robots_command", metavar="SUBCOMMAND", required=True)

    check = commands.add_parser(
        "check",
        help="is a URL allowed for an agent? prints allowed or disallowed",
        description="Print 'allowed' or 'disallowed' for URL and AGENT under ROBOTS_FILE.",
    )
    delay = commands.add_parser(
        "crawl-delay",
        help="the Crawl-delay for an agent: seconds (e.g. 2.5) or none",
        description=(
            "Print the Crawl-delay in seconds for AGENT (shortest form: 2.5, 10, 0.25), "
            "or 'none'. With several tokens, the largest of their delays."
        ),
    )
    maps = commands.add_parser(
        "sitemaps",
        help="the Sitemap URLs, one a line in file order",
        description="Print the Sitemap URLs of ROBOTS_FILE, one a line, in file order, "
        "without duplicates (nothing when there are none).",
    )
    for command in (check, delay, maps):
        command.add_argument("--status", default="200", metavar="CODE|error", help=_STATUS_HELP)
        command.add_argument("robots_file", metavar="ROBOTS_FILE", help=_FILE_HELP)
    for command in (check, delay):
        command.add_argument("agent", metavar="AGENT", help=_AGENT_HELP)
    check.add_argument(
        "url", metavar="URL", help="a full URL (only its path and query count) or a path"
    )
    check.set_defaults(handler=_run(_check))
    delay.set_defaults(handler=_run(_crawl_delay))
    maps.set_defaults(handler=_run(_sitemaps))
