"""Paths shared by the tests (one place; fixtures in conftest.py use these)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"


def shared_file(*parts: str) -> Path:
    """A file under ../shared/data, or skip the test when it is absent."""
    p = SHARED_DATA.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"shared dataset not available: {p}")
    return p
