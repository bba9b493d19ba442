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
