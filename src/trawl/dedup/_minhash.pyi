from collections.abc import Callable
from typing import Any

def minima(hashes: Any, a: Any, b: Any) -> bytes: ...
def signature(
    data: bytes, shingle: int, a: Any, b: Any, long_hash: Callable[[bytes], int]
) -> bytes | None: ...
