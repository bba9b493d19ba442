"""Rare values binned before measuring (``mwem`` and ``aim`` ``compress``): bins from released counts only, sensitivity kept."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpsynth.algorithms import aim, mwem
from dpsynth.algorithms.base import AlgorithmContext
from dpsynth.algorithms.compression import RARE, Bins, bins_from_noisy
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.schema import CategoricalColumn, Domain
from dpsynth.privacy import Neighbouring
from dpsynth.privacy.accountant import Ledger
from dpsynth.workload.spec import Workload


def test_bins_merge_two_or_more_rare_values_only():
    bins = bins_from_noisy([np.array([100.0, 2.0, -5.0, 50.0]), np.array([100.0, 2.0, 80.0]), np.array([1.0, 0.0])],
                           sd=10.0)
    assert RARE == 3.0
    assert bins.maps[0].tolist() == [0, 2, 2, 1] and bins.maps[1] is None and bins.maps[2].tolist() == [0, 0]
    assert bins.describe(["a", "b", "c"]) == {"a": [1, 2], "c": [0, 1]}
    assert bins.shape((0, 1), (4, 3)) == (3, 3) and bins.binned((0, 1)) and not bins.binned((1,))


def test_binned_query_sums_cells_and_keeps_the_sensitivity():
    """The query matrix of a binned marginal has one 1 per cell (column): a row moves one binned count by 1,
    so the measurement's L1 and L2 sensitivity are the marginal's; it sums the same cells as ``apply``."""
    bins = Bins([np.array([0, 2, 2, 1]), None, np.array([0, 0, 1])])
    sizes = (4, 3, 3)
    table = np.random.default_rng(0).integers(0, 50, size=sizes)
    q = bins.query((0, 1, 2), sizes)
    assert q.shape == (3 * 3 * 2, 36)
    assert (q.sum(axis=0) == 1).all() and set(np.unique(q)) == {0.0, 1.0}
    assert np.array_equal(q @ table.reshape(-1), bins.apply(table, (0, 1, 2)).reshape(-1))
    assert bins.apply(table, (0, 1, 2)).sum() == table.sum()


@pytest.mark.parametrize("alg, raw", [(mwem, {"variant": "pgm", "compress": True, "iterations": 2}),
                                      (aim, {"compress": True, "rounds_per_column": 1, "init_fraction": 0.1})])
def test_bins_come_from_the_released_one_way_counts(alg, raw):
    """The bins ``mwem`` (``pgm``) and ``aim`` with ``compress`` report are those of its *released* noisy 1-way marginals.

    Every value of the 8 columns has a true count of 42, just below 3 noise deviations (3·sqrt(2)/0.1 = 42.4 at
    ε = 8, ``init_fraction`` 0.1 over 8 columns): from the true counts every column would merge all its values;
    from the noisy ones a column merges a random subset, all four with probability about 0.07 (all 8 columns:
    about 10⁻⁹, the chance this test passes when the bins are taken from the true counts)."""
    d, k = 8, 4
    domain = Domain(tuple(CategoricalColumn(f"c{j}", tuple(range(k))) for j in range(d)))
    rng = np.random.default_rng(3)
    codes = np.stack([rng.permutation(np.repeat(np.arange(k), 42)) for _ in range(d)], axis=1)
    pairs = tuple(itertools.combinations(range(d), 2))
    counts = ArrayCounts(codes, domain)
    ctx = AlgorithmContext(domain=domain, counts=counts, ledger=Ledger(8.0, 0.0), neighbouring=Neighbouring.ADD_REMOVE,
                           n=float(counts.n), rows=counts.n, workload=pairs, queries=Workload(pairs, ()))
    out = alg.run(ctx, alg.parse_params(raw), rng=np.random.default_rng(4))
    one_way = sorted((m for m in out.marginals if len(m.attrs) == 1), key=lambda m: m.attrs)
    assert [m.attrs for m in one_way] == [(j,) for j in range(d)]
    sd = one_way[0].scale * math.sqrt(2.0)  # Laplace: deviation sqrt(2)·scale
    assert sd == pytest.approx(math.sqrt(2.0) / 0.1, rel=1e-6)
    want = bins_from_noisy([m.values for m in one_way], sd).describe(domain.names)
    assert out.details["binned_values"] == want
    assert want != {f"c{j}": list(range(k)) for j in range(d)}
    assert len(out.details["selected"]) == out.details["binned_measurements"] + len(out.marginals) - d


def test_absent_values_combine_every_per_value_measurement():
    """Column 0's value 2: 1-way count 4 (σ 10) but −5 over its 2-way slice (σ 1 per cell, 2 cells): absent;
    value 1: 1-way −3 but +3 over the slice: kept (from the 1-way alone it would go); a binned measurement
    (``query``) is not read; with the 1-way counts alone column 1 (−1, −2) would lose every value, so it keeps
    them all."""
    from dpsynth.algorithms.compression import absent_values
    from dpsynth.models.estimation import LinearMeasurement

    ms = [LinearMeasurement((0,), np.array([50.0, -3.0, 4.0]), 10.0),
          LinearMeasurement((1,), np.array([-1.0, -2.0]), 10.0),
          LinearMeasurement((0, 1), np.array([[30.0, 20.0], [2.0, 1.0], [-4.0, -1.0]]), 1.0),
          LinearMeasurement((0, 1), np.array([-1e6, 0.0]), 1.0, np.ones((2, 6)) * [[1], [0]])]
    out = absent_values(ms, (3, 2))
    assert out[0].tolist() == [1.0, 1.0, 0.0] and out[1] is None
    alone = absent_values(ms[:2], (3, 2))
    assert alone[0].tolist() == [1.0, 0.0, 1.0] and alone[1] is None


@pytest.mark.parametrize("raw", [{"variant": "pgm", "iterations": 3, "absent": True},
                                 {"variant": "pgm", "iterations": 3, "absent": True, "accounting": "zcdp"}])
def test_absent_values_come_from_the_released_marginals(raw):
    """``mwem`` ``absent``: the values the model gives no mass are those :func:`absent_values` finds in the
    *released* marginals.  8 columns of 4 values, values 2 and 3 held by no row: from the true counts all 16
    would go and no other; from the noisy ones each goes with probability about 1/2, so the two agree with
    probability about 2⁻¹⁶ (and a held value would have to stay every time)."""
    from dpsynth.algorithms.compression import absent_values
    from dpsynth.models.estimation import LinearMeasurement

    d, k = 8, 4
    domain = Domain(tuple(CategoricalColumn(f"c{j}", tuple(range(k))) for j in range(d)))
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 2, size=(400, d))
    pairs = tuple(itertools.combinations(range(d), 2))
    counts = ArrayCounts(codes, domain)
    delta = 1e-6 if raw.get("accounting") == "zcdp" else 0.0
    ctx = AlgorithmContext(domain=domain, counts=counts, ledger=Ledger(2.0, delta), neighbouring=Neighbouring.ADD_REMOVE,
                           n=float(counts.n), rows=counts.n, workload=pairs, queries=Workload(pairs, ()))
    out = mwem.run(ctx, mwem.parse_params(raw), rng=np.random.default_rng(6))
    ms = [LinearMeasurement(m.attrs, m.values, m.scale if m.noise == "gaussian" else m.scale * math.sqrt(2.0))
          for m in out.marginals]
    want = absent_values(ms, domain.sizes)
    got = out.details["absent_values"]
    assert got == {domain.names[a]: np.flatnonzero(w == 0).tolist() for a, w in enumerate(want) if w is not None}
    assert got and got != {name: [2, 3] for name in domain.names}
    for a, name in enumerate(domain.names):
        one = out.model.project((a,))
        assert (one[got.get(name, [])] == 0).all() and (np.delete(one, got.get(name, [])) > 0).all()
