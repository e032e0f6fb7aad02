"""`citebound.api.__all__` is pinned and importable."""

from __future__ import annotations

import citebound.api as api


def test_api_all_is_pinned() -> None:
    assert sorted(api.__all__) == api.__all__
    for name in api.__all__:
        assert hasattr(api, name), name
    assert {"create_app", "check_bind", "KeyRing", "hash_key", "new_key"} <= set(api.__all__)
