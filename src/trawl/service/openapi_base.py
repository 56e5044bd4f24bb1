"""Pieces every part of the service's OpenAPI document uses."""

from __future__ import annotations

from typing import Any

BEARER = "bearerAuth"


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def answer(name: str, description: str) -> dict[str, Any]:
    """A JSON answer whose body is the schema ``name``."""
    return {"description": description, "content": {"application/json": {"schema": ref(name)}}}
