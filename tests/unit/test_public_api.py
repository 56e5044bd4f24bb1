"""The public API is pinned: adding or removing a name is a deliberate change."""

import trawl


def test_public_names_are_pinned() -> None:
    assert sorted(trawl.__all__) == sorted(
        [
            "BlockedAddressError",
            "ConfigError",
            "StorageError",
            "TrawlError",
            "UrlError",
            "__version__",
        ]
    )
    for name in trawl.__all__:
        assert hasattr(trawl, name)
