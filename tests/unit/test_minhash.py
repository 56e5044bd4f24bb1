from __future__ import annotations

import pickle
import random
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trawl.dedup.minhash import MinHasher, preset
from trawl.testing._sample_text import text_generator


def _article(seed: int) -> str:
    return "\n".join(text_generator(0).prose(random.Random(seed), 800))


def test_deterministic_and_sized() -> None:
    a = _article(1)
    s1, s2 = MinHasher().signature(a), MinHasher().signature(a)
    assert s1 is not None and s1 == s2 and len(s1) == 4 * 128
    assert len(MinHasher().band_keys(s1)) == 32


def test_similar_texts_are_close_and_different_far() -> None:
    m = MinHasher()
    a = _article(1)
    edited = "Published 3 March. " + a.replace(". ", ". Indeed, ", 3)
    sa, se, sb = m.signature(a), m.signature(edited), m.signature(_article(2))
    assert sa is not None and se is not None and sb is not None
    assert m.similarity(sa, se) >= m.threshold
    assert m.similarity(sa, sb) < 0.1
    assert set(m.band_keys(sa)) & set(m.band_keys(se))
    assert not set(m.band_keys(sa)) & set(m.band_keys(sb))


def test_empty_text_has_no_signature() -> None:
    assert MinHasher().signature(" .,; ") is None
    assert MinHasher().signature("one") is not None


def test_bad_parameters() -> None:
    with pytest.raises(ValueError, match="multiple"):
        MinHasher(perms=100, bands=32)
    with pytest.raises(ValueError, match="threshold"):
        MinHasher(threshold=0)


# -- the native path (_minhash.c) against the numpy path ---------------------------------


@pytest.fixture
def native() -> Any:
    return pytest.importorskip("trawl._native", reason="the C module is not built")


def _built() -> bool:
    try:
        import trawl._native  # noqa: F401
    except ImportError:
        return False
    return True


needs_native = pytest.mark.skipif(not _built(), reason="the C module is not built")


def _both(
    text: str, shingle: int = 3, perms: int = 128, bands: int = 32
) -> tuple[bytes | None, bytes | None]:
    native = MinHasher(shingle=shingle, perms=perms, bands=bands).signature(text)
    numpy_path = MinHasher(shingle=shingle, perms=perms, bands=bands, native=False).signature(text)
    return native, numpy_path


@needs_native
def test_native_is_the_numpy_path_on_articles() -> None:
    for seed in range(5):
        native, numpy_path = _both(_article(seed))
        assert native is not None and native == numpy_path


@needs_native
@pytest.mark.parametrize("length", [*range(0, 260), 500, 4000])
def test_native_token_hash_at_every_length(length: int) -> None:
    """XXH3's short paths (0-3, 4-8, 9-16, 17-128, 129-240 bytes) and the long one
    (xxhash's), one token alone and among others."""
    rnd = random.Random(length)
    word = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789\u00e9") for _ in range(length))
    for text in (word, f"a {word} b {word[::-1]} c", f"{word} {word}"):
        for shingle in (1, 3):
            native, numpy_path = _both(text, shingle=shingle)
            assert native == numpy_path


@needs_native
@given(
    st.text(max_size=3000),
    st.integers(1, 8),
    st.sampled_from([(128, 32), (40, 8), (32, 32), (3, 1)]),
)
def test_native_is_the_numpy_path(text: str, shingle: int, layout: tuple[int, int]) -> None:
    perms, bands = layout
    native, numpy_path = _both(text, shingle=shingle, perms=perms, bands=bands)
    assert native == numpy_path


def test_native_setting_survives_pickling() -> None:
    import pickle

    m = MinHasher(native=False, perms=64, bands=16)
    again = pickle.loads(pickle.dumps(m))
    assert again == m and again.native is False and again.perms == 64


def test_minima_over_given_hashes(native: Any) -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2**63, 1000, dtype=np.uint64)
    a = rng.integers(0, 2**63, 37, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    b = rng.integers(0, 2**63, 37, dtype=np.uint64)
    expected = ((a[:, None] * x[None, :] + b[:, None]).min(axis=1) >> np.uint64(32)).astype("<u4")
    assert native.minima(x, a, b) == expected.tobytes()
    with pytest.raises(ValueError, match="differ in length"):
        native.minima(x, a, b[:3])
    with pytest.raises(ValueError, match="whole number"):
        native.minima(b"abc", a, b)


@needs_native
def test_a_parse_worker_signs_with_the_crawls_coefficients_without_numpy() -> None:
    # numpy is some 16 MB of a worker's memory: the crawl process derives the
    # coefficients and hands them over when the worker starts.
    code = (
        "import pickle, sys\n"
        "from trawl.parse.worker import init_worker\n"
        "from trawl.dedup.minhash import MinHasher\n"
        "init_worker(pickle.loads(sys.stdin.buffer.read()))\n"
        "signature = MinHasher(seed=7).signature(sys.argv[1])\n"
        "assert 'numpy' not in sys.modules, 'numpy was loaded'\n"
        "sys.stdout.buffer.write(signature)\n"
    )
    text = "the quick brown fox jumps over the lazy dog and runs far away from here"
    hasher = MinHasher(seed=7)
    done = subprocess.run(
        [sys.executable, "-c", code, text],
        input=pickle.dumps(hasher.coefficients()),
        capture_output=True,
        check=True,
    )
    assert done.stdout == hasher.signature(text) == MinHasher(seed=7, native=False).signature(text)


def test_preset_refuses_coefficients_of_another_length() -> None:
    perms, seed, a, b = MinHasher().coefficients()
    with pytest.raises(ValueError, match="another length"):
        preset((perms + 1, seed, a, b))


def test_the_default_schemes_coefficients_are_numpys() -> None:
    from trawl.dedup import minhash

    a, b = minhash._coefficients(128, 1)  # numpy's derivation, as before the table
    written = MinHasher().coefficients()
    assert written == (128, 1, a.tobytes(), b.tobytes())


@given(
    st.lists(st.binary(min_size=8 * 4, max_size=8 * 4), min_size=1, max_size=6),
    st.binary(min_size=8 * 4, max_size=8 * 4),
)
def test_similarities_are_the_share_of_equal_minima(stored: list[bytes], query: bytes) -> None:
    m = MinHasher(perms=8, bands=4)
    q = np.frombuffer(query, dtype="<u4")
    expected = [float(np.count_nonzero(np.frombuffer(s, dtype="<u4") == q)) / 8 for s in stored]
    assert m.similarities(query, stored) == expected
    assert m.similarity(query, stored[0]) == expected[0]
    with pytest.raises(ValueError, match="bytes"):
        m.similarities(query, [query[:-4]])
