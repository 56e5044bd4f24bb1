"""The headless Debian Chromium the browser tests drive through Playwright.

No network on the test machines: the flags keep Chromium from reaching out at all.
"""

from __future__ import annotations

from pathlib import Path

from trawl.fetch.render.browser import BASE_FLAGS

CHROMIUM = Path("/usr/bin/chromium")
# The crawler's own flags for a headless Chromium, without its network cut off (these
# tests load the search page from a local server).
CHROMIUM_ARGS = list(BASE_FLAGS)
