"""Rendering in real Chromium (Debian's, driven by Playwright's async API).

These run in the main test process: the async API leaves nothing behind, unlike the
sync API of tests/browser, whose leftover event loop would stop every asyncio test
after it (which is why tests/browser runs in a process of its own). They skip only
when /usr/bin/chromium is absent (``make setup`` installs it).
"""

from __future__ import annotations

import pytest

from tests.chromium import CHROMIUM

if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is not installed (make setup installs it)", allow_module_level=True)
