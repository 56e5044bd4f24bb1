"""The start of a parse worker process: a light module, so a worker costs little.

A worker of the parse role's pool runs ``init_worker`` first, and so imports this
module and the parser, nothing more. When the initializer lived in the parse role's
module, every worker imported the parse role and what it imports (the HTTP client,
the stages): 0.36 CPU-seconds a worker instead of 0.12, two or more per crawl process.
"""

from __future__ import annotations

import signal

from trawl.parse.page import PageInput, ParseOptions, parse_page

__all__ = ["init_worker"]


def init_worker() -> None:
    """Warm a parse worker: the parser's tables loaded once.

    Ctrl-C is the crawl process's business: a terminal sends SIGINT to the whole
    process group, and a worker that took it would die with a KeyboardInterrupt
    traceback mid-page; the crawl process stops the pool itself. SIGTERM keeps its
    default: the pool's own clean-up after a crashed worker terminates the others.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parse_page(
        PageInput("http://warm.invalid/", (), b"<p>warming up this worker</p>"), ParseOptions()
    )
