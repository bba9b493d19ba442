"""The other sign of a column whose coarse range ends at 0 (dpsynth/data/discover/signs.py): a sizable share of
rows past 0 that the profile's buckets missed is found in more cells of the first fine histogram and kept inside
the bounds, from mechanism outputs only."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpsynth.algorithms import get_algorithm
from dpsynth.config import zero_config
from dpsynth.data.discover import discover_schema, share_for
from dpsynth.data.discover.signs import OneSign, decades
from dpsynth.data.discover.tables import as_discovery_table
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger, zcdp_share
from tests.helpers import Replay


def _signed(n=2000, seed=0, negative=0.14):
    """A small table like forbes_companies: ``x`` signed (median 0.25, magnitudes 0.01 to ~10, ``negative`` of its
    rows below 0), six amounts of one sign beside it."""
    rng = np.random.default_rng(seed)
    mag = np.round(np.exp(rng.normal(np.log(0.25), 1.2, n)), 2) + 0.01
    sign = np.where(rng.random(n) < negative, -1.0, 1.0)
    return pd.DataFrame({"x": sign * mag, **{f"c{i}": np.round(rng.exponential(5, n), 2) for i in range(6)}})


def _discover(df, seed):
    cfg = zero_config(1.0, 1e-6)
    src = as_discovery_table(df)
    spec, privacy = cfg.discover, cfg.privacy
    comp = get_algorithm(cfg.algorithm).composition(cfg.params, privacy)
    share = share_for(n=src.n_rows(), columns=len(src.names), epsilon=1.0, delta=1e-6, approx_delta=spec.delta,
                      l1=privacy.neighbouring.histogram_l1)
    ledger = Ledger(1.0, 1e-6, comp)
    found = discover_schema(src, spec, ledger=ledger, neighbouring=privacy.neighbouring,
                            rng=np.random.default_rng(seed), rho=zcdp_share(1.0, 1e-6, share, spec.delta))
    return found, ledger


def test_a_signed_column_keeps_its_other_side():
    """14% negative rows spread over four decades pass none of the profile's tests on 2,000 rows (the coarse range
    starts at 0); the first fine histogram's cells past 0 find them: a bin below 0 on every seed, while the
    columns of one sign keep 0 as their lower bound."""
    for seed in range(3):
        found, _ = _discover(_signed(), seed)
        cols = found.schema["columns"]
        assert cols["x"]["edges"][0] <= -1 and cols["x"]["edges"][1] < 0, cols["x"]  # (a bin or more below 0)
        assert all(cols[f"c{i}"]["edges"][0] == 0 for i in range(6)), cols
        assert any("rows past 0" in line for line in found.columns["x"]["learned"])


def test_the_other_side_reads_only_noisy_counts(monkeypatch):
    """Discovery on a table with 14% negative rows, then on one with none with the first run's noisy outputs
    replayed: the same schema and the same measurements (a decision or a decade's mass read off the true rows
    past 0 would differ).  Mutants: ``discover-signs-true-other``, ``discover-signs-true-decades``."""
    replay = Replay()
    monkeypatch.setattr(mechanisms, "recorder", replay)
    found, ledger = _discover(_signed(), 0)
    replay.mode = "replay"
    found2, ledger2 = _discover(_signed(seed=1, negative=0.0), 0)
    assert replay.i == len(replay.calls)
    assert found2.schema == found.schema
    assert [c.measured for c in ledger2.charges] == [c.measured for c in ledger.charges]
    assert found.schema["columns"]["x"]["edges"][0] < 0


def test_later_histograms_leave_the_rows_past_0_out():
    """OneSign: the cells ending at 0 hold only the rows on their side (each row in at most one cell); cells
    reaching past 0 are counted as before."""
    x = pd.DataFrame({"x": [-5.0, -0.5, 0.0, 0.2, 0.7, 3.0, 9.0]})
    col = as_discovery_table(x).column("x")
    below = OneSign(col, -1, 0.0)
    assert below.cell_counts([0.0, 1.0, 5.0]).tolist() == [3, 2]  # [0, 1) without the 2 negatives, [1, ∞)
    assert below.cell_counts([0.5, 1.0, 5.0]).tolist() == [3, 2]  # (−∞, 1) without them: rows ≥ 0 below 1
    assert below.cell_counts([-1.0, 1.0]).tolist() == col.cell_counts([-1.0, 1.0]).tolist() == [7]
    above = OneSign(col, 1, 0.0)
    assert above.cell_counts([-1.0, 0.0]).tolist() == [3]  # (−∞, 0] without the rows above 0
    mags = decades(np.array([0.0, 0.1, 0.2, 0.5, 1.0, 3.0]), -1)
    assert mags.tolist() == [0.0, 0.1, 1.0, 10.0]  # cells [−0.1, 0), [−1, −0.1), [−10, −1), (−∞, −10)
    assert decades(np.array([0.0, 0.05, 0.1, 3.0]), -1).tolist() == [0.0, 0.1, 1.0, 10.0]  # (the first cell's decade)
    assert decades(np.arange(0, 40) - 0.5, -1).tolist() == [0.5, 1.0, 10.0, 100.0]  # unit cells: from −0.5
