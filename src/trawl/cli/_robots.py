"""`trawl robots ...`: placeholder until the robots commands land."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("robots", help="robots helpers")
    parser.set_defaults(handler=lambda _args: 2)
