"""`trawl url ...`: placeholder until the url commands land."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("url", help="url helpers")
    parser.set_defaults(handler=lambda _args: 2)
