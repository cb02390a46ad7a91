"""The host tier's tests: `tier` turns it on for a test (the suite may run with it off)."""

from __future__ import annotations

import pytest

from torchjax import _host_tier, _program_soon


@pytest.fixture
def tier():
    was = _host_tier.ON[0]
    _host_tier.ON[0] = True
    try:
        yield _host_tier
    finally:
        _host_tier.ON[0] = was
        _program_soon.wait_all()
