"""One noise stream per column in discovery (noise.column_streams): a column's discovery does not move another
column's noise, and two columns never share a stream.  Deterministic (fixed seeds)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpsynth.data.discover import discover_schema, parse_discover
from dpsynth.data.discover.noise import column_streams
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger


def _discover(table: pd.DataFrame, seed: int = 3):
    spec = parse_discover({"epsilon": 1.0, "delta": 1e-6})
    ledger = Ledger(spec.epsilon, spec.delta)
    return discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(seed)), ledger


def test_another_columns_path_leaves_a_column_untouched():
    """``score`` beside a column of wide integers, then beside a different one (other name, skewed amounts with
    cents, whose discovery asks for other histograms): ``score``'s schema, what it learned and its ledger entries are identical.  Before the per-column
    streams, the other column's histograms came first from the shared stream and shifted every later draw."""
    rng = np.random.default_rng(0)
    n = 5000
    score = rng.normal(50.0, 10.0, size=n)
    one = pd.DataFrame({"count": rng.integers(0, 5000, size=n), "score": score})
    two = pd.DataFrame({"amount": np.round(rng.lognormal(8.0, 1.5, size=n), 2), "score": score})
    (f1, l1), (f2, l2) = _discover(one), _discover(two)
    assert f1.schema["columns"]["score"] == f2.schema["columns"]["score"]
    assert f1.columns["score"] == f2.columns["score"]
    mine = [[c.to_dict() for c in led.charges if c.measured.startswith("score:")] for led in (l1, l2)]
    assert mine[0] == mine[1] and len(mine[0]) >= 2


def test_two_columns_with_the_same_values_get_independent_noise(monkeypatch):
    """Two columns holding the same values (names differ only in their last byte): their first noisy histograms
    differ.  The same noise on both would reveal the difference of their true counts exactly.  Mutant: every
    column seeded alike."""
    outs: dict[str, np.ndarray] = {}

    def record(mechanism, true, output, info):
        name = str(info.get("measured", "")).split(":")[0]
        outs.setdefault(name, np.asarray(output, dtype=float))

    monkeypatch.setattr(mechanisms, "recorder", record)
    x = np.random.default_rng(1).integers(0, 100, size=3000)
    _discover(pd.DataFrame({"colA": x, "colB": x}))
    assert outs["colA"].shape == outs["colB"].shape
    assert not np.array_equal(outs["colA"], outs["colB"])


def test_streams_are_keyed_by_name_not_position():
    a = column_streams(np.random.default_rng(5), ["x", "y"])
    b = column_streams(np.random.default_rng(5), ["y", "x", "z"])
    assert a["x"].integers(2**62) == b["x"].integers(2**62)
    assert a["y"].integers(2**62) == b["y"].integers(2**62)
    c = column_streams(np.random.default_rng(5), ["ab", "ab\x00"])  # the length keeps these apart
    assert c["ab"].integers(2**62) != c["ab\x00"].integers(2**62)
