"""Rendering pages in headless Chromium, every browser request kept to the crawl's rules.

``decide`` (the render policy: never, auto, always), ``hints`` (hosts learned to need
rendering), ``gate`` (each browser request: method, type, guard, scope, robots.txt,
the host's pace, caps), ``browser`` (launching Chromium without a network of its own),
``pool`` (N pages at once, restarts), ``page`` (one render), ``step`` (the fetch
stage's render step). Playwright is imported only when a browser is launched.
"""
