"""The ``trawl`` command: a thin argparse layer over the Python API.

Each command group lives in its own private module exposing ``register(subparsers)``;
a handler returns the process exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from trawl import memory
from trawl.cli import _crawl, _export, _extract, _fleet, _robots, _search, _serve, _url

Handler = Callable[[argparse.Namespace], int]

_GROUPS = (_crawl, _fleet, _export, _extract, _search, _serve, _url, _robots)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trawl",
        description="trawl: a polite, crash-safe web crawler with search.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in _GROUPS:
        group.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Before any thread starts (tantivy's, the log flusher): see trawl.memory.
    memory.limit_arenas()
    memory.one_blas_thread()
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head` and closed early: not an error worth a traceback.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
