"""A discovery's released counts as 1-way linear measurements (dpsynth/data/discover/evidence.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth.config import zero_config
from dpsynth.data.discover.evidence import Evidence, one_way_queries
from dpsynth.data.schema import CategoricalColumn, IntegerColumn, NumericColumn


def test_bins_that_are_unions_of_cells_become_queries_with_one_noise_scale():
    """Cells of width 1 over [0, 6); bins [0, 1), [1, 3), [3, 3.5), [3.5, 6]: the inner edge 3.5 cuts a cell, so
    the two bins beside it are not exact sums and are left out, and so are the end bins (encoding clamps into
    them values no cell measured); [1, 3) sums 2 cells (row and answer divided by sqrt(2), so every row has the
    cells' sd); the null cell is its own query."""
    col = NumericColumn("x", (0.0, 1.0, 3.0, 3.5, 6.0), missing=True)
    ev = Evidence(null=(7.0, 3.0), cells=np.arange(0.0, 7.0), cell_counts=np.array([1.0, 2, 3, 4, 5, 6]), cell_sd=2.0)
    (q0, v0, s0), (q1, v1, s1) = one_way_queries(ev, col)
    np.testing.assert_array_equal(q0, [[0, 0, 0, 0, 1]])
    assert v0.tolist() == [7.0] and s0 == 3.0
    np.testing.assert_allclose(q1, [[0, 1 / np.sqrt(2), 0, 0, 0]])
    np.testing.assert_allclose(v1, [5 / np.sqrt(2)])
    assert s1 == 2.0


def test_end_bins_and_uncovered_bins_are_skipped():
    """A bin the cells do not reach is not measured, nor are the end bins (they also hold clamped values)."""
    col = NumericColumn("x", (2.0, 4.0, 6.0, 8.0, 10.0))
    ev = Evidence(cells=np.arange(0.0, 8.0), cell_counts=np.ones(7), cell_sd=1.0)
    ((q, v, _),) = one_way_queries(ev, col)
    assert np.flatnonzero(q.sum(axis=0)).tolist() == [1]  # [4, 6); [6, 8) reaches past the cells' end 7
    np.testing.assert_allclose(v * np.sqrt(2), [2.0])


def test_integer_column_codes_and_kept_categories_above_the_selection_margin():
    col = IntegerColumn("y", 3, 5)
    ev = Evidence(cells=np.arange(2.5, 6.0), cell_counts=np.array([5.0, 6.0, 7.0]), cell_sd=1.0)
    ((q, v, _),) = one_way_queries(ev, col)
    np.testing.assert_array_equal(q, [[0, 1, 0]])  # the inner value; 3 and 5 are the end codes
    cat = CategoricalColumn("c", ("a", "b", "c"), missing=True, other=True)
    ev = Evidence(labels=("b", "a", "c"), label_counts=np.array([100.0, 50.0, 20.0]), label_sd=10.0)
    ((q, v, sd),) = one_way_queries(ev, cat)  # the floor is 20 + 2·10 = 40: 'c' (at the threshold) is left out
    np.testing.assert_array_equal(q, [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]])
    assert v.tolist() == [100.0, 50.0] and sd == 10.0


def test_zero_config_release_reuses_the_discovery_histograms(monkeypatch):
    """The release's estimator receives the discovery's released counts (AlgorithmContext.prior) as 1-way
    measurements over the discovered schema's codes."""
    from dpsynth.algorithms import mwem_pgm
    from dpsynth.pipeline import release

    seen = []
    orig = mwem_pgm.estimate
    monkeypatch.setattr(mwem_pgm, "estimate", lambda sizes, ms, **kw: seen.append(list(ms)) or orig(sizes, ms, **kw))
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"age": rng.integers(18, 90, 4000), "colour": rng.choice(["red", "blue", "green"], 4000, p=[0.6, 0.3, 0.1]),
                          "income": np.where(rng.random(4000) < 0.2, np.nan, rng.lognormal(10, 1, 4000))})
    result = release(table, zero_config(1.0, 1e-6), rng=1)
    assert len(result.synthetic) > 0 and seen
    queries = [m for m in seen[0] if m.query is not None]
    assert {m.attrs for m in queries} == {(0,), (1,), (2,)}
    for m in queries:
        assert m.query.shape == (m.values.size, result.model.config.domain.sizes[m.attrs[0]]) and m.sigma > 0


@pytest.mark.parametrize("seed", range(3))
def test_a_mostly_null_skewed_column_gets_bounds_around_its_values(seed):
    """Issue 27, loans' annual_income_joint (85% null, 1,500 incomes over five logarithmic buckets, none of which
    passes the cut alone): the edges were [-1.5, -0.5, 0.5]; windows of adjacent buckets now find the values."""
    from dpsynth.data.discover import discover_schema
    from dpsynth.data.discover.spec import DiscoverSpec
    from dpsynth.privacy.accountant import Ledger, ZCDPComposition

    rng = np.random.default_rng(seed)
    x = np.where(rng.random(10_000) < 0.85, np.nan, np.round(rng.lognormal(np.log(110_000), 0.45, 10_000), -3))
    table = pd.DataFrame({"income": x})
    ledger = Ledger(10.0, 1e-6, ZCDPComposition())
    found = discover_schema(table, DiscoverSpec(epsilon=1.0, delta=1e-8), ledger=ledger,
                            rng=np.random.default_rng(seed), rho=1.5e-4)
    edges = found.schema["columns"]["income"]["edges"]
    assert 0 <= edges[0] <= np.nanmedian(x) <= edges[-1] <= 10 * np.nanmax(x), edges


def test_zero_config_decodes_numbers_from_the_discovery_histograms_at_no_cost():
    """The fine view of a discovered schema comes from the discovery's last fine histogram of each numeric
    column (post-processing): the report says so, the ledger has no fine-decode stage, and the numbers follow the
    data within their bins (a lognormal's median within 15%, where uniform decoding in wide bins drifts)."""
    from dpsynth.pipeline import release

    rng = np.random.default_rng(3)
    table = pd.DataFrame({"income": rng.lognormal(10, 1, 20_000), "colour": rng.choice(["red", "blue"], 20_000)})
    result = release(table, zero_config(1.0, 1e-6), rng=2)
    assert result.report["decode"]["fine"] == "on" and result.report["decode"]["columns"] == ["income"]
    assert "fine-decode" not in {e["stage"] for e in result.report["ledger"]}
    assert result.model.fine is not None and "income" in result.model.fine.columns
    med, real = float(np.nanmedian(result.synthetic["income"].astype(float))), float(np.median(table["income"]))
    assert abs(med / real - 1) < 0.15, (med, real)


def test_zero_config_keeps_binary_columns_faithful():
    """Regression (found by the batch walkthrough's gate): the discovery's fine view of an integral column with
    one integer per bin decoded every value to one side (a column 48% ones came out all zeros); such columns now
    decode exactly, and integral cells are shifted to the decoder's whole units."""
    from dpsynth.pipeline import release

    rng = np.random.default_rng(5)
    p = np.linspace(0.1, 0.7, 8)
    table = pd.DataFrame((rng.random((4000, 8)) < p).astype(int), columns=[f"a{j}" for j in range(8)])
    synth = release(table, zero_config(1.0, 1e-6), rng=1).synthetic
    means = synth.astype(float).mean().to_numpy()
    assert np.all(np.abs(means - table.mean().to_numpy()) < 0.1), (means, table.mean().to_numpy())
    assert set(np.unique(synth.to_numpy(dtype=float)[~np.isnan(synth.to_numpy(dtype=float))])) <= {0.0, 1.0}
