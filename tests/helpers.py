"""What the tests share (one place): paths to ../shared (fixtures in conftest.py use these) and the mechanism-output
replay of the discovery tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"


def shared_file(*parts: str) -> Path:
    """A file under ../shared/data, or skip the test when it is absent."""
    p = SHARED_DATA.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"shared dataset not available: {p}")
    return p


class Replay:
    """A ``mechanisms.recorder``: records a discovery's mechanism outputs on one table (``mode == "record"``), then
    replays them on another (``mode = "replay"``), so that a test can show a schema depends on the data only through
    its mechanisms (same outputs in, same schema out)."""

    def __init__(self):
        self.mode, self.calls, self.i = "record", [], 0

    def __call__(self, mechanism, true, output, info):
        if self.mode == "record":
            self.calls.append(output)
            return None
        out = self.calls[self.i]
        self.i += 1
        return out if np.ndim(out) == 0 else np.array(out, copy=True)
