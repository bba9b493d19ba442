"""Logarithmic fine cells for a column that linear cells would pack (dpsynth/data/discover/packed.py; issue 27,
held-out-12's hpc_jobs: ``compounds``, 20-14,103 with median 226, got linear cells of 200 from its 50 fine cells,
the first holding half the rows)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpsynth.data.discover import discover_schema, parse_discover
from dpsynth.data.discover.noise import coarse_grid
from dpsynth.data.discover.packed import heaviest, packed_start
from dpsynth.privacy.accountant import Ledger, ZCDPComposition, approx_dp_to_zcdp

EXT = np.concatenate([[-1e10], coarse_grid(-1e9, 1e9), [1e10]])


def _buckets(x: np.ndarray) -> np.ndarray:
    """Counts of positive numbers per profile bucket (as the profile's cells past the cut would show them)."""
    counts = np.histogram(x, EXT)[0].astype(float)
    return np.where(EXT[:-1] > 0, counts, 0.0)


def test_a_log_normal_count_is_packed_and_gets_log_cells():
    rng = np.random.default_rng(0)
    x = np.round(np.exp(rng.normal(np.log(230), 1.3, size=4000))) + 20
    start = packed_start(EXT, _buckets(x), lo=10.0, hi=10000.0, integral=True, cells=50, bins=10)
    assert start is not None and 10 <= start <= 50  # (the bucket of the 1% quantile)


def test_a_smooth_column_over_few_magnitudes_keeps_linear_cells():
    rng = np.random.default_rng(1)
    ages = np.round(rng.normal(45, 12, size=4000).clip(18, 90))
    assert packed_start(EXT, _buckets(ages), lo=15.0, hi=100.0, integral=True, cells=50, bins=10) is None


def test_a_spike_is_heavy_in_both_grids_and_changes_nothing():
    rng = np.random.default_rng(2)
    x = np.where(rng.random(4000) < 0.6, 100.0, rng.uniform(50, 150, size=4000))
    assert packed_start(EXT, _buckets(x), lo=50.0, hi=150.0, integral=False, cells=50, bins=10) is None
    assert heaviest(np.array([0.0, 1.0]), EXT, np.zeros(EXT.size - 1)) == 0.0


def test_discovery_of_a_packed_count_has_log_edges():
    """End to end (zero-config-like ρ): the edges follow the rows' magnitudes, not linear steps of 200."""
    rng = np.random.default_rng(4)
    n = 4000
    table = pd.DataFrame({"compounds": (np.round(np.exp(rng.normal(np.log(230), 1.3, size=n))) + 20).astype(int),
                          "k": rng.integers(0, 3, size=n)})
    spec = parse_discover({"epsilon": 0.5, "delta": 5e-7})
    rho = 0.5 * approx_dp_to_zcdp(1.0, 1e-6 - 5e-7) / 4  # (a column's share of a wider table)
    found = discover_schema(table, spec, ledger=Ledger(1.0, 1e-6, ZCDPComposition()), rng=np.random.default_rng(4),
                            rho=rho)
    edges = np.asarray(found.schema["columns"]["compounds"]["edges"], dtype=float)
    assert np.median(table["compounds"]) > edges[3]  # three bins under the median 252 (linear cells: 0, 100, 200, 300)


def test_the_grid_is_chosen_on_noisy_counts_only(monkeypatch):
    """Discovery on D (log-normal counts: logarithmic cells), then on D' (the same rows spread evenly over the
    range, which true counts would give linear cells) with D's noisy outputs replayed: the same schema."""
    from dpsynth.privacy import mechanisms
    from tests.helpers import Replay

    rng = np.random.default_rng(4)
    n = 4000
    d = pd.DataFrame({"compounds": (np.round(np.exp(rng.normal(np.log(230), 1.3, size=n))) + 20).astype(int),
                      "k": rng.integers(0, 3, size=n)})
    spec = parse_discover({"epsilon": 0.5, "delta": 5e-7})
    rho = 0.5 * approx_dp_to_zcdp(1.0, 1e-6 - 5e-7) / 4

    def run(table):
        return discover_schema(table, spec, ledger=Ledger(1.0, 1e-6, ZCDPComposition()),
                               rng=np.random.default_rng(4), rho=rho)

    replay = Replay()
    monkeypatch.setattr(mechanisms, "recorder", replay)
    found = run(d)
    assert any("linear cells would pack" in x for x in found.columns["compounds"]["learned"])
    replay.mode = "replay"
    again = run(d.assign(compounds=rng.integers(20, 10_000, size=n)))
    assert replay.i == len(replay.calls)
    assert again.schema == found.schema
