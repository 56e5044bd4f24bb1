"""The crawl CLI's event loop (cli/_run.py run_loop): uvloop's where installed."""

from __future__ import annotations

import asyncio
import builtins
from typing import Any

import pytest

from trawl.cli._run import run_loop


async def _loop_kind() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


def test_runs_on_uvloop_when_installed() -> None:
    pytest.importorskip("uvloop")
    assert run_loop(_loop_kind()).startswith("uvloop")


def test_runs_on_asyncio_without_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_uvloop(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "uvloop":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_uvloop)
    assert run_loop(_loop_kind()).startswith("asyncio")


def test_raises_what_the_coroutine_raised() -> None:
    async def fail() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        run_loop(fail())
